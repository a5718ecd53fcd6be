"""A subagent's `outputFiles` name what it wrote with its shell too, not only with the file
tools: through `agentls serve` against the strict fake model."""

from __future__ import annotations

import asyncio

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import new_session, prompt, start
from tests.test_e2e_subagents import openai_role

SCRIPT = "mkdir -p out && echo one > out/made.txt && echo two >> notes.md"


async def test_files_a_subagent_writes_with_bash_are_its_output_files(
    tmp_path, workspace, fake_llm
) -> None:
    (workspace / "notes.md").write_text("# Notes\n")
    (workspace / "untouched.txt").write_text("same\n")

    def reply(body):
        done = [m for m in body["messages"] if m["role"] == "tool"]
        if openai_role(body) == "executor":
            if not done:
                return Reply(tool_calls=[FakeToolCall("bash", {"command": SCRIPT})])
            return Reply(text="made out/made.txt and added to notes.md")
        if not done:
            args = {"subagent_type": "executor", "description": "make files", "prompt": "Go."}
            return Reply(tool_calls=[FakeToolCall("task", args, id="call_task")])
        return Reply(text="done")

    fake_llm.script(*[reply] * 4)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        result = await asyncio.wait_for(
            client.call("session/prompt", prompt(session_id, "make them")), 60
        )
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    assert (workspace / "out" / "made.txt").read_text() == "one\n"
    subagent = [u["update"] for u in client.updates if u["update"]["kind"] == "subagent"]
    assert subagent[-1]["status"] == "completed"
    assert sorted(subagent[-1]["outputFiles"]) == ["notes.md", "out/made.txt"]
    [result_text] = [
        m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"
    ]
    assert "out/made.txt" in result_text and "notes.md" in result_text

"""Zed's claude-agent-acp adapter, unmodified, runs `agentls` as its Claude Code executable; the
ACP TypeScript SDK's client drives the adapter over stdio (tests/clients/acp_claude.mjs)."""

from __future__ import annotations

from typing import Any

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env, use_fake_model
from tests.node_clients import AGENTLS, require_clients, run_script


@pytest.fixture(autouse=True)
def _clients():
    require_clients()


def run_acp(tmp_path, workspace, fake_llm, prompts, **plan: Any) -> list[dict[str, Any]]:
    use_fake_model(workspace, fake_llm)
    env = server_env(tmp_path, OPENAI_API_KEY="k", CLAUDE_CODE_EXECUTABLE=AGENTLS)
    plan = {"cwd": str(workspace), "env": env, "prompts": prompts, **plan}
    return run_script("acp_claude.mjs", plan, timeout=100)


def updates(events, kind):
    return [
        e["update"]
        for e in events
        if e["event"] == "update" and e["update"]["sessionUpdate"] == kind
    ]


def responses(events):
    return [e["response"] for e in events if e["event"] == "response"]


def test_a_prompt_that_reads_a_file(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="It says hello."),
    )
    events = run_acp(tmp_path, workspace, fake_llm, [{"text": "What is in notes.txt?"}])
    assert [r["stopReason"] for r in responses(events)] == ["end_turn"]
    text = "".join(u["content"]["text"] for u in updates(events, "agent_message_chunk"))
    assert text == "It says hello."
    [call] = updates(events, "tool_call")
    assert call["kind"] == "read"
    # The call's input arrives with the assistant message, after the streamed empty start.
    [shown] = [u for u in updates(events, "tool_call_update") if u.get("title")]
    assert (shown["toolCallId"], shown["title"]) == (call["toolCallId"], "Read notes.txt")
    assert shown["locations"] == [{"path": str(workspace / "notes.txt"), "line": 1}]
    [done] = [u for u in updates(events, "tool_call_update") if u.get("status") == "completed"]
    assert done["toolCallId"] == call["toolCallId"]


def test_an_edit_asks_permission_with_its_diff(tmp_path, workspace, fake_llm):
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    fake_llm.script(Reply(tool_calls=[FakeToolCall("edit_file", edit)]), Reply(text="Changed it."))
    events = run_acp(tmp_path, workspace, fake_llm, [{"text": "set x to 2"}], permission="allow")
    [asked] = [e["request"] for e in events if e["event"] == "permission"]
    assert asked["toolCall"]["title"] == "Edit app.py"
    assert asked["toolCall"]["content"] == [
        {"type": "diff", "path": str(target), "oldText": "x = 1", "newText": "x = 2"}
    ]
    assert [r["stopReason"] for r in responses(events)] == ["end_turn"]
    assert target.read_text() == "x = 2\n"


def test_cancel_stops_the_turn(tmp_path, workspace, fake_llm):
    # claude-agent-acp 0.23.1 ends the prompt after a cancel at once, on the cancelled turn's
    # idle state, as it does with Claude Code (fixed in later releases): one prompt here.
    fake_llm.script(Reply(text=" ".join(["slow"] * 50), chunk_delay=0.1))
    events = run_acp(
        tmp_path, workspace, fake_llm, [{"text": "talk", "cancelOn": "agent_message_chunk"}]
    )
    assert [r["stopReason"] for r in responses(events)] == ["cancelled"]
    text = "".join(u["content"]["text"] for u in updates(events, "agent_message_chunk"))
    assert text.count("slow") < 50


NEW_ADAPTER = "@agentclientprotocol/claude-agent-acp"


def test_the_current_adapter_starts_sessions_and_prompts(tmp_path, workspace, fake_llm):
    """claude-agent-acp 0.101.0 starts its sessions with `--permission-mode auto` and runs
    `auth status --json` first."""
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="It says hello."),
    )
    events = run_acp(
        tmp_path, workspace, fake_llm, [{"text": "What is in notes.txt?"}], adapter=NEW_ADAPTER
    )
    assert [r["stopReason"] for r in responses(events)] == ["end_turn"]
    text = "".join(u["content"]["text"] for u in updates(events, "agent_message_chunk"))
    assert text.endswith("It says hello.")

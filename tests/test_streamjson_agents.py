"""Agents an SDK defines (`agents=` of the Python claude-agent-sdk) are subagent profiles the
`task` tool starts, through the real SDK."""

from __future__ import annotations

from claude_agent_sdk import AgentDefinition, SystemMessage

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_streamjson_sdk import collect, options


async def test_a_programmatic_agent_runs_as_a_subagent(tmp_path, workspace, fake_llm):
    task = {"subagent_type": "reviewer", "description": "review", "prompt": "Review a.py"}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("task", task)]),
        Reply(text="looks fine"),
        Reply(text="The reviewer says it looks fine."),
    )
    agents = {
        "reviewer": AgentDefinition(
            description="Reviews code", prompt="You are a strict reviewer.", tools=["Read", "Grep"]
        )
    }
    messages = await collect("review", options(tmp_path, workspace, fake_llm, agents=agents))
    assert messages[-1].result == "The reviewer says it looks fine."
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "reviewer" in init.data["agents"]
    sub = fake_llm.requests[1].body
    assert "You are a strict reviewer." in sub["messages"][0]["content"]
    assert {t["function"]["name"] for t in sub["tools"]} == {"read_file", "grep"}

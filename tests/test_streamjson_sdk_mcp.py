"""In-process SDK MCP servers (`create_sdk_mcp_server` of the Python claude-agent-sdk):
agentls reaches them with `mcp_message` control requests, through the real SDK."""

from __future__ import annotations

from claude_agent_sdk import ClaudeSDKClient, create_sdk_mcp_server, tool

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_streamjson_sdk import options

calls: list[dict] = []


@tool("add", "Add two numbers", {"a": int, "b": int})
async def add(args):
    calls.append(args)
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


async def test_a_tool_of_an_in_process_server(tmp_path, workspace, fake_llm):
    calls.clear()
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("mcp__calc__add", {"a": 2, "b": 40})]),
        Reply(text="forty-two"),
    )
    server = create_sdk_mcp_server("calc", tools=[add])
    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        mcp_servers={"calc": server},
        allowed_tools=["mcp__calc__add"],
    )
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("add")
        messages = [m async for m in client.receive_response()]
    assert calls == [{"a": 2, "b": 40}]
    assert messages[-1].result == "forty-two"
    offered = {t["function"]["name"] for t in fake_llm.requests[0].body["tools"]}
    assert "mcp__calc__add" in offered
    results = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert "42" in results[-1]
    init = messages[0]
    assert init.data["mcp_servers"] == [{"name": "calc", "status": "connected"}]

"""A stdio MCP server gets none of the keys and tokens agentls holds, only a small base set and
what its own configuration passes (`env`, with `${VAR}`). A real server reports the
environment it was started with; real `agentls serve`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env
from tests.test_e2e_mcp import configure, prompt, tool_messages

REPORT = Path(__file__).parent / "mcp_servers" / "env_report.py"
HELD = {
    "OPENAI_API_KEY": "sk-held-openai-0123456789",
    "ANTHROPIC_API_KEY": "sk-held-anthropic-0123456789",
    "AGENTLS_TEST_SECRET": "held-secret-0123456789",
}
PASSED = "gh-passed-token-0123456789"


async def test_a_stdio_mcp_server_gets_only_what_its_config_passes(tmp_path, workspace, fake_llm):
    entry = {
        "command": sys.executable,
        "args": [str(REPORT)],
        "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
    }
    configure(tmp_path, workspace, fake_llm, {"mcpServers": {"report": entry}})
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("mcp__report__environment", {}, id="call_env")]),
        Reply(text="done"),
    )
    client = AgentClient()
    await client.start(server_env(tmp_path, GITHUB_TOKEN=PASSED, **HELD))
    try:
        await client.initialize()
        session = await client.call("session/new", {"cwd": str(workspace)})
        result = await client.call("session/prompt", prompt(session["sessionId"], "env"))
    finally:
        await client.close()
    assert result["terminal"] == "completed"
    [reported] = tool_messages(fake_llm.requests[-1].body)
    environ = json.loads(reported)
    assert environ["GITHUB_TOKEN"] == PASSED
    assert not set(HELD) & set(environ), sorted(environ)
    assert not [v for v in HELD.values() if v in reported]

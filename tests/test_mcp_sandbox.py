"""A stdio MCP server that opts into the command sandbox (`"sandbox": true` in its entry),
through `agentls serve` over real stdio, with real bubblewrap: inside, it writes the workspace
and nothing else; without the opt-in it writes anywhere; where no sandbox can be made, it does
not start and says why."""

from __future__ import annotations

import json
import sys

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from server.tools.sandbox import probe
from tests.agent_client import AgentClient, server_env
from tests.mcp_servers import HERE
from tests.test_e2e_mcp import configure, mcp_notes, prompt

needs_bwrap = pytest.mark.skipif(not probe().available, reason=f"no sandbox: {probe().reason}")


def writer(**extra) -> dict:
    return {"command": sys.executable, "args": [str(HERE / "writer.py")], **extra}


async def run_writes(tmp_path, workspace, fake_llm, entry, **env):
    outside = tmp_path / "outside.txt"
    configure(tmp_path, workspace, fake_llm, {"mcpServers": {"writer": entry}})
    fake_llm.script(
        Reply(
            tool_calls=[
                FakeToolCall(
                    "mcp__writer__write", {"path": str(workspace / "in.txt"), "text": "in"}, "c1"
                ),
                FakeToolCall("mcp__writer__write", {"path": str(outside), "text": "out"}, "c2"),
            ]
        ),
        Reply(text="done"),
    )
    client = AgentClient()
    await client.start(
        server_env(tmp_path, OPENAI_API_KEY="k", **env), "--permission-mode", "bypassPermissions"
    )
    try:
        await client.initialize()
        session = await client.call("session/new", {"cwd": str(workspace)})
        result = await client.call("session/prompt", prompt(session["sessionId"], "write"))
    finally:
        await client.close()
    outputs = [
        u["update"].get("output") or u["update"].get("error") or ""
        for u in client.updates
        if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] != "in_progress"
    ]
    return result, outputs, outside, client


@needs_bwrap
async def test_a_sandboxed_mcp_server_writes_the_workspace_and_nothing_outside(
    tmp_path, workspace, fake_llm
):
    result, outputs, outside, _ = await run_writes(
        tmp_path, workspace, fake_llm, writer(sandbox=True)
    )
    assert result["terminal"] == "completed", result
    assert (workspace / "in.txt").read_text() == "in"
    assert not outside.exists()
    assert "wrote" in outputs[0] and "Read-only file system" in outputs[1], outputs


async def test_without_the_opt_in_an_mcp_server_writes_anywhere(tmp_path, workspace, fake_llm):
    _, outputs, outside, _ = await run_writes(tmp_path, workspace, fake_llm, writer())
    assert outside.read_text() == "out", outputs


async def test_an_mcp_server_that_asks_for_a_sandbox_does_not_start_without_one(
    tmp_path, workspace, fake_llm
):
    result, outputs, outside, client = await run_writes(
        tmp_path, workspace, fake_llm, writer(sandbox={"mode": "workspace-write"}), AGENTLS_BWRAP=""
    )
    assert not outside.exists() and not (workspace / "in.txt").exists()
    assert result["terminal"] == "completed" and not any("wrote" in o for o in outputs), outputs
    failed = [n for n in mcp_notes(client.updates) if n.get("status") == "failed"]
    assert failed and "asks for a sandbox and none can be made" in json.dumps(failed), failed


async def test_a_bad_sandbox_value_makes_the_entry_invalid(tmp_path, workspace, fake_llm):
    _, _, outside, client = await run_writes(
        tmp_path, workspace, fake_llm, writer(sandbox={"mode": "open"})
    )
    assert not outside.exists()
    notes = json.dumps(mcp_notes(client.updates))
    assert "sandbox must be true, a mode or {mode, network}" in notes, notes

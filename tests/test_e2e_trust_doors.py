"""The same trust rules at the other front doors: `agentls acp` (driven by the ACP SDK's own
client) and `agentls -p` (stream-json / print mode) (issue 19, item 10)."""

from __future__ import annotations

import json
import subprocess
import sys

from acp import schema

from server.testing.fake_llm import Reply
from tests.agent_client import server_env
from tests.test_acp_frontend import Editor, agentls_acp, text
from tests.trust_fixture import CANARY, bash, clone

BYPASS = {"permissions": {"mode": "bypassPermissions", "allow": ["Bash"]}}


def reject(request) -> schema.RequestPermissionResponse:
    return schema.RequestPermissionResponse(
        outcome=schema.AllowedOutcome(outcome="selected", option_id="reject_once")
    )


async def test_acp_ignores_an_untrusted_projects_bypass_mode(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, project=BYPASS)
    fake_llm.script(Reply(tool_calls=[bash(f"touch {CANARY}")]), Reply(text="done"))
    editor = Editor()
    editor.on_permission = reject
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    async with agentls_acp(tmp_path, env, editor) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert session.modes.current_mode_id == "default"
        response = await conn.prompt(session_id=session.session_id, prompt=text("go"))
    assert response.stop_reason == "end_turn"
    assert len(editor.permissions) == 1
    assert not (workspace / CANARY).exists()


async def test_acp_meta_carries_the_editors_trust(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, project={"permissions": {"allow": ["Bash(touch:*)"]}})
    fake_llm.script(Reply(tool_calls=[bash("touch allowed")]), Reply(text="done"))
    editor = Editor()
    editor.on_permission = reject
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    async with agentls_acp(tmp_path, env, editor) as (conn, _init):
        session = await conn.new_session(
            cwd=str(workspace), mcp_servers=[], agentls={"workspaceTrusted": True}
        )
        await conn.prompt(session_id=session.session_id, prompt=text("go"))
    assert editor.permissions == []
    assert (workspace / "allowed").exists()


def test_print_mode_ignores_an_untrusted_projects_bypass_mode(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, project=BYPASS)
    fake_llm.script(Reply(tool_calls=[bash(f"touch {CANARY}")]), Reply(text="done"))
    proc = subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", "go", "--output-format", "stream-json",
         "--verbose"],
        capture_output=True,
        cwd=workspace,
        env=server_env(tmp_path, OPENAI_API_KEY="k"),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    frames = [json.loads(line) for line in proc.stdout.splitlines()]
    [init] = [f for f in frames if f["type"] == "system" and f.get("subtype") == "init"]
    assert init["permissionMode"] == "default"
    [notice] = [f for f in frames if f.get("subtype") == "workspace_trust"]
    assert (notice["trusted"], notice["ignored"]) == (
        False, ["permissions.mode (bypassPermissions)", "permissions.allow"]
    )
    assert not (workspace / CANARY).exists()

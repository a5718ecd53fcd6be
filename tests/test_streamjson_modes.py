"""Claude Code's permission modes the SDKs and adapters send (`dontAsk`, `auto`) and
`agentls auth status`, through the real process and the Python claude-agent-sdk."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from claude_agent_sdk import ClaudeSDKClient, PermissionResultAllow, ResultMessage

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env
from tests.test_streamjson_flags import run, user
from tests.test_streamjson_sdk import collect, options


async def test_dont_ask_refuses_what_is_not_pre_approved(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "touch made.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "w.txt", "content": "x"})]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="done"),
    )
    asked = []

    async def can_use_tool(name, tool_input, context):
        asked.append(name)
        return PermissionResultAllow()

    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        permission_mode="dontAsk",
        allowed_tools=["Write"],
        can_use_tool=can_use_tool,
    )
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("work")
        messages = [m async for m in client.receive_response()]
    assert asked == [] and not (workspace / "made.txt").exists()
    assert (workspace / "w.txt").read_text() == "x"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "done"
    assert [d["tool_name"] for d in result.permission_denials] == ["Bash"]
    init = messages[0]
    assert init.data["permissionMode"] == "dontAsk"


def test_auto_mode_runs_as_default_and_says_so(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="hi"))
    frames, proc = run(
        tmp_path, workspace, fake_llm, "--permission-mode", "auto", lines=[user("hello")]
    )
    assert proc.returncode == 0, proc.stderr.decode()
    init = next(f for f in frames if f.get("subtype") == "init")
    assert init["permissionMode"] == "default"
    [note] = [f for f in frames if f.get("subtype") == "informational"]
    assert note["level"] == "warning" and "'auto'" in note["content"]
    assert frames[-1]["type"] == "result" and frames[-1]["result"] == "hi"


def test_set_permission_mode_auto_is_refused_in_band(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="hi"))
    request = {"subtype": "set_permission_mode", "mode": "auto"}
    lines = [
        {"type": "control_request", "request_id": "m1", "request": request},
        {"type": "control_request", "request_id": "m2", "request": {**request, "mode": "dontAsk"}},
        user("hello"),
    ]
    frames, _ = run(tmp_path, workspace, fake_llm, lines=lines)
    answers = {
        f["response"]["request_id"]: f["response"]
        for f in frames
        if f["type"] == "control_response"
    }
    assert answers["m1"]["subtype"] == "error" and "'auto'" in answers["m1"]["error"]
    assert answers["m2"]["subtype"] == "success"
    init = next(f for f in frames if f.get("subtype") == "init")
    assert init["permissionMode"] == "dontAsk"


def test_auth_status_json(tmp_path):
    env = server_env(tmp_path)
    for argv in (["auth", "status", "--json"], ["--settings", "{}", "auth", "status", "--json"]):
        proc = subprocess.run(
            [sys.executable, "-m", "server.cli", *argv], capture_output=True, env=env, timeout=60
        )
        assert proc.returncode == 0
        status = json.loads(proc.stdout)
        assert status["loggedIn"] is False and status["apiProvider"] == "agentls"


async def test_max_budget_stops_the_turn_and_the_next(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("list_dir", {})]),
        Reply(text="never"),
        Reply(text="never either"),
    )
    opts = options(tmp_path, workspace, fake_llm, max_budget_usd=0.0000001, model="gpt-5")
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("work")
        first = [m async for m in client.receive_response()]
        await client.query("more")
        second = [m async for m in client.receive_response()]
    for result in (first[-1], second[-1]):
        assert (result.subtype, result.is_error) == ("error_max_budget_usd", True)
    assert len(fake_llm.requests) == 1 and first[-1].total_cost_usd > 0


async def test_fork_session_is_refused_before_the_original_changes(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="first"), Reply(text="never"))
    first = await collect("hello", options(tmp_path, workspace, fake_llm))
    session = first[-1].session_id
    opts = options(tmp_path, workspace, fake_llm, resume=session, fork_session=True)
    with pytest.raises(Exception, match="--fork-session is not supported"):
        await collect("again", opts)
    assert len(fake_llm.requests) == 1

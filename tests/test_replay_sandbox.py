"""Replay never repeats a side effect outside its scratch copy: a recorded bypass-mode turn
whose command appended to a file outside the workspace is replayed (`agentls replay --verify`,
a real subprocess, real bubblewrap). In the sandbox the write is stopped and the verifier says
`blocked`; `--recorded-effects` plays the recorded result instead; with no sandbox to be had the
replay refuses (exit 2) unless told to use the recorded effects."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from server.tools.sandbox import probe
from tests.agent_client import server_env
from tests.mcp_servers import HERE
from tests.trust_fixture import bash, clone, serve_turn

needs_bwrap = pytest.mark.skipif(not probe().available, reason=f"no sandbox: {probe().reason}")


def replay(home, *args, **env):
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "replay", *args],
        capture_output=True,
        text=True,
        env=server_env(home, **env),  # no API key: replay must not need the model
        timeout=120,
    )


async def record_outside_write(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    outside = tmp_path / "outside.txt"
    outside.write_text("one\n")
    calls = [bash("cat notes.txt", "call_read"), bash(f"echo ran >> {outside}", "call_out")]
    (workspace / "notes.txt").write_text("hello\n")
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, calls, args=("--permission-mode", "bypassPermissions")
    )
    assert turn.result["terminal"] == "completed", turn.result
    assert outside.read_text() == "one\nran\n"
    return turn.new["sessionId"], outside


def facts(report) -> dict[str, str]:
    return {f["name"]: f["status"] for f in report["facts"]}


@needs_bwrap
async def test_replay_runs_commands_in_the_sandbox_and_reports_a_stopped_write_as_blocked(
    tmp_path, workspace, fake_llm
):
    session_id, outside = await record_outside_write(tmp_path, workspace, fake_llm)

    done = replay(tmp_path, session_id, "--verify", "--json")
    assert outside.read_text() == "one\nran\n"  # not run again outside the sandbox
    assert done.returncode == 3, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "blocked" and report["verified"] is False
    assert facts(report)["effects_reproduced"] == "blocked"
    blocked = next(f for f in report["facts"] if f["name"] == "effects_reproduced")
    assert "call 2 bash" in blocked["detail"] and "write" in blocked["detail"]
    assert facts(report)["no_new_tool_failures"] == "passed"

    case = tmp_path / "case.json"
    case.write_text(json.dumps({"changed": ["notes.txt"], "toolsInclude": ["bash"]}))
    shown = replay(tmp_path, session_id, "--case", str(case))
    assert "  PASS  the tools called include bash" in shown.stdout
    assert (
        "  BLOCK notes.txt changed: notes.txt did not change; 1 blocked call may have done it"
        in shown.stdout
    )
    assert shown.returncode == 3
    assert shown.stdout.rstrip().splitlines()[-1] == "BLOCKED: 2 of 7 facts could not be checked"
    assert outside.read_text() == "one\nran\n"


@needs_bwrap
async def test_replay_with_recorded_effects_uses_the_recorded_results_and_passes(
    tmp_path, workspace, fake_llm
):
    session_id, outside = await record_outside_write(tmp_path, workspace, fake_llm)
    done = replay(tmp_path, session_id, "--verify", "--json", "--recorded-effects")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "passed" and report["verified"] is True
    assert facts(report)["effects_reproduced"] == "passed"
    assert "2 recorded results" in next(
        f["detail"] for f in report["facts"] if f["name"] == "effects_reproduced"
    )
    assert outside.read_text() == "one\nran\n"


async def test_replay_refuses_without_a_sandbox_unless_it_uses_the_recorded_effects(
    tmp_path, workspace, fake_llm
):
    session_id, outside = await record_outside_write(tmp_path, workspace, fake_llm)
    refused = replay(tmp_path, session_id, "--verify", AGENTLS_BWRAP="")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "sandbox" in refused.stderr and "--recorded-effects" in refused.stderr
    assert refused.stdout == ""
    played = replay(tmp_path, session_id, "--verify", "--recorded-effects", AGENTLS_BWRAP="")
    assert played.returncode == 0, played.stdout + played.stderr
    assert played.stdout.rstrip().endswith("verified: PASS")
    assert outside.read_text() == "one\nran\n"


async def test_replay_does_not_call_an_mcp_server_again(tmp_path, workspace, fake_llm):
    outside = tmp_path / "mcp-outside.txt"
    server = {"command": sys.executable, "args": [str(HERE / "writer.py")]}
    clone(workspace, fake_llm, user={"mcpServers": {"writer": server}})
    call = FakeToolCall("mcp__writer__write", {"path": str(outside), "text": "once"}, "c_mcp")
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [call], args=("--permission-mode", "bypassPermissions")
    )
    assert turn.result["terminal"] == "completed", turn.result
    assert outside.read_text() == "once"
    session_id = turn.new["sessionId"]
    outside.write_text("changed since")

    done = replay(tmp_path, session_id, "--verify", "--json")
    assert outside.read_text() == "changed since"  # the server was not started, the call not made
    assert done.returncode == 3, done.stdout + done.stderr
    blocked = next(f for f in json.loads(done.stdout)["facts"] if f["name"] == "effects_reproduced")
    assert blocked["status"] == "blocked"
    assert "an MCP server's tool, and a replay starts no MCP servers" in blocked["detail"]

    played = replay(tmp_path, session_id, "--verify", "--recorded-effects")
    assert played.returncode == 0, played.stdout + played.stderr
    assert outside.read_text() == "changed since"


@needs_bwrap
async def test_a_command_the_sandbox_ran_unasked_is_allowed_again_in_the_replay(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm)
    calls = [bash("echo hi > note.txt", "call_note"), bash("cat note.txt", "call_cat")]
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, calls, new={"sandbox": "workspace-write"}
    )
    # both ran unasked (auto-allowed in the sandbox): no answer was recorded to replay
    assert turn.requests == [] and (workspace / "note.txt").read_text() == "hi\n"
    done = replay(tmp_path, turn.new["sessionId"], "--verify", "--json", "--keep")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert facts(report)["effects_reproduced"] == "passed"
    assert [c["status"] for c in report["replay"]["toolCalls"]] == ["completed", "completed"]
    copy = Path(report["workspace"])
    try:
        assert (copy / "note.txt").read_text() == "hi\n"  # ran again, sandboxed, in the copy
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)


async def test_a_subagents_command_replays_from_its_recording(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    outside = tmp_path / "sub-outside.txt"
    task = {"description": "write", "prompt": "append a line", "subagent_type": "executor"}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("task", task, id="call_task")]),
        Reply(tool_calls=[bash(f"echo sub >> {outside}", "c_sub")]),
        Reply(text="appended"),
    )
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [], args=("--permission-mode", "bypassPermissions")
    )
    assert turn.result["terminal"] == "completed", turn.result
    assert outside.read_text() == "sub\n"
    played = replay(
        tmp_path,
        turn.new["sessionId"],
        "--verify",
        "--json",
        "--recorded-effects",
        AGENTLS_BWRAP="",
    )
    assert played.returncode == 0, played.stdout + played.stderr
    fact = next(f for f in json.loads(played.stdout)["facts"] if f["name"] == "effects_reproduced")
    assert fact["status"] == "passed" and "1 recorded results played" in fact["detail"], fact
    assert outside.read_text() == "sub\n"

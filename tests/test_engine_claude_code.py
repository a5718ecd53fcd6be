"""The `claude-code` engine: `agentls serve --engine claude-code` drives `agentls` in its
stream-json mode (on the loopback fake model), so every event, permission, question and
interrupt crosses both hops; plus a CLI that ignores the interrupt."""

from __future__ import annotations

import asyncio
import shlex
import sys
import time

from protocol.methods import NewSessionParams, PromptParams
from server.engines.claude_code import ClaudeCodeEngine
from server.engines.registry import ExternalSettings
from server.sessions.model import ClientCapabilities
from server.sessions.service import SessionService
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env
from tests.test_engine_acp import ASK, alive, fake_env, prompt, tool_results, updates_of

INNER = [sys.executable, "-m", "server.cli"]
STUCK_CLI = """
import json, subprocess, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "control_request" and msg["request"]["subtype"] == "initialize":
        response = {"subtype": "success", "request_id": msg["request_id"], "response": {}}
        print(json.dumps({"type": "control_response", "response": response}), flush=True)
    elif msg.get("type") == "user":
        child = subprocess.Popen(["sleep", "60"])
        open(sys.argv[1], "w").write(str(child.pid))
"""


async def outer(tmp_path, fake_llm, command=INNER) -> AgentClient:
    client = AgentClient()
    args = ["--engine", "claude-code", "--engine-command", shlex.join(command)]
    await client.start(fake_env(tmp_path, fake_llm), *args)
    await client.initialize()
    return client


async def new_session(client, workspace) -> str:
    result = await client.call("session/new", {"cwd": str(workspace)})
    assert result["engine"] == "claude-code"
    return result["sessionId"]


async def gone(*pids: int) -> None:
    deadline = time.monotonic() + 30
    while any(alive(p) for p in pids):
        assert time.monotonic() < deadline, f"still running: {[p for p in pids if alive(p)]}"
        await asyncio.sleep(0.05)


async def test_events_and_permissions_cross_both_hops(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(text="Looking.", tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo hi > a.txt"})]),
        Reply(text="Done."),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo no > b.txt"})]),
        Reply(text="Skipped."),
    )
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        first = await client.call("session/prompt", prompt(session_id, "read and run"))
        client.on_permission = lambda p: {
            "outcome": {"outcome": "selected", "optionId": "reject_once"}
        }
        second = await client.call("session/prompt", prompt(session_id, "run another"))
    finally:
        await client.close()

    assert (first["terminal"], first["stopReason"]) == ("completed", "end_turn")
    assert first["usage"]["inputTokens"] == 30 and second["terminal"] == "completed"
    assert (workspace / "a.txt").read_text() == "hi\n" and not (workspace / "b.txt").exists()
    text = "".join(u["text"] for u in updates_of(client, "agent_message_chunk"))
    assert text == "Looking.Done.Skipped."
    calls = updates_of(client, "tool_call")
    assert [(c["name"], c["toolKind"], c["title"]) for c in calls] == [
        ("read_file", "read", f"Read {workspace / 'notes.txt'}"),  # Claude Code's file_path
        ("bash", "execute", "Bash echo hi > a.txt"),
        ("bash", "execute", "Bash echo no > b.txt"),
    ]
    results = updates_of(client, "tool_call_update")
    assert [u["status"] for u in results] == ["completed", "completed", "denied"]
    assert "1: hello" in results[0]["output"]
    asked = [p["toolCall"]["name"] for p in client.permission_requests]
    assert asked == ["bash", "bash"]
    steps = updates_of(client, "step_finish")
    assert [s["step"] for s in steps] == [1, 2, 3, 1, 2]
    assert [u["terminal"] for u in updates_of(client, "turn_end")] == ["completed", "completed"]


async def test_question_crosses_both_hops(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(tool_calls=[FakeToolCall("ask_user_question", ASK)]), Reply(text="ok"))
    client = await outer(tmp_path, fake_llm)
    client.on_question = lambda p: {"answers": {"Which runner?": "unittest"}}
    try:
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "set up tests"))
    finally:
        await client.close()

    assert result["terminal"] == "completed", result
    assert client.question_requests[0]["questions"][0]["question"] == "Which runner?"
    assert "Which runner? → unittest" in tool_results(fake_llm, 1)[0]


async def test_interrupt_crosses_both_hops_and_model_switch(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["slow"] * 100), chunk_delay=0.05), Reply(text="fresh"))
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        turn = asyncio.ensure_future(client.call("session/prompt", prompt(session_id, "talk")))
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk")
        client.notify("session/cancel", {"sessionId": session_id})
        cancelled = await asyncio.wait_for(turn, 60)
        await client.call("session/set_model", {"sessionId": session_id, "modelId": "gpt-5.4-mini"})
        again = await client.call("session/prompt", prompt(session_id, "again"))
    finally:
        await client.close()

    assert (cancelled["terminal"], cancelled["stopReason"]) == ("aborted", "cancelled")
    assert again["terminal"] == "completed"
    assert [u["terminal"] for u in updates_of(client, "turn_end")] == ["aborted", "completed"]
    assert [r.body["model"] for r in fake_llm.requests] == ["gpt-5.5", "gpt-5.4-mini"]


async def test_a_failing_turn_is_one_failed_terminal(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(status=400, error_message="bad request"))
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "hi"))
    finally:
        await client.close()
    assert result["terminal"] == "failed" and "bad request" in result["error"]
    assert [u["terminal"] for u in updates_of(client, "turn_end")] == ["failed"]


async def test_a_missing_cli_fails_session_new(tmp_path, workspace, fake_llm):
    client = await outer(tmp_path, fake_llm, command=["/nonexistent/claude"])
    try:
        error = None
        try:
            await client.call("session/new", {"cwd": str(workspace)})
        except Exception as exc:
            error = exc
    finally:
        await client.close()
    assert "/nonexistent/claude" in str(error)


class Channel:
    capabilities = ClientCapabilities()

    def __init__(self):
        self.updates = []

    def send_update(self, params):
        self.updates.append(params.update)


async def test_a_cli_ignoring_interrupt_is_killed_with_its_group(tmp_path, workspace, fake_llm):
    script = tmp_path / "stuck_cli.py"
    script.write_text(STUCK_CLI)
    pid_file = tmp_path / "child.pid"
    command = [sys.executable, str(script), str(pid_file)]
    engine = ClaudeCodeEngine(
        ExternalSettings(command=command), environ=server_env(tmp_path), cancel_grace=1.0
    )
    service = SessionService({"claude-code": engine}, Channel())
    info = await service.new_session(NewSessionParams(cwd=str(workspace), engine="claude-code"))
    cli_pid = service.get(info.session_id).handle.peer.pid
    turn = asyncio.ensure_future(
        service.prompt(PromptParams.model_validate(prompt(info.session_id, "hang")))
    )
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the agent never started its child"
        await asyncio.sleep(0.05)
    child_pid = int(pid_file.read_text())
    service.cancel(info.session_id)
    result = await asyncio.wait_for(turn, 60)
    assert result.terminal == "aborted"
    await gone(cli_pid, child_pid)
    assert [u.terminal for u in service.channel.updates if u.kind == "turn_end"] == ["aborted"]
    await service.close_all()


async def test_load_resumes_the_cli_conversation(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="Noted."), Reply(text="It was 42."))
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        await client.call("session/prompt", prompt(session_id, "remember 42"))
    finally:
        await client.close()
    client = await outer(tmp_path, fake_llm)
    try:
        loaded = await client.call("session/load", {"sessionId": session_id})
        result = await client.call("session/prompt", prompt(session_id, "which number?"))
    finally:
        await client.close()

    assert loaded["engine"] == "claude-code" and result["terminal"] == "completed"
    history = [m for m in fake_llm.requests[1].body["messages"] if m["role"] != "system"]
    assert [m["role"] for m in history[:3]] == ["user", "assistant", "user"]
    assert "remember 42" in str(history[0]["content"])

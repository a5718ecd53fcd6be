"""The `acp` engine: `agentls serve --engine acp` drives `agentls acp` (on the loopback fake model),
so every event, permission, question and cancel crosses both hops; plus process-group checks."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from protocol.methods import NewSessionParams, PromptParams
from server.engines.acp import AcpEngine
from server.engines.peer import peer_environment
from server.engines.registry import ExternalSettings, external_settings
from server.sessions.model import ClientCapabilities
from server.sessions.service import SessionService
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env

INNER = [sys.executable, "-m", "server.cli", "acp"]
ASK = {
    "questions": [
        {
            "question": "Which runner?",
            "header": "Runner",
            "options": [{"label": "pytest"}, {"label": "unittest"}],
        }
    ]
}
STUCK_AGENT = """
import json, subprocess, sys
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}}
    elif method == "session/new":
        result = {"sessionId": "stuck"}
    elif method == "session/prompt":
        child = subprocess.Popen(["sleep", "60"])
        open(sys.argv[1], "w").write(str(child.pid))
        continue
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def fake_env(tmp_path: Path, fake_llm) -> dict[str, str]:
    return server_env(
        tmp_path,
        AGENTLS_PROVIDER="openai",
        AGENTLS_MODEL="gpt-5.5",
        AGENTLS_BASE_URL=fake_llm.openai_base_url,
        AGENTLS_MAX_RETRIES="0",
        OPENAI_API_KEY="k",
    )


async def outer(tmp_path, fake_llm, command=INNER) -> AgentClient:
    client = AgentClient()
    args = ["--engine", "acp", "--engine-command", shlex.join(command)]
    await client.start(fake_env(tmp_path, fake_llm), *args)
    await client.initialize()
    return client


async def new_session(client, workspace) -> str:
    result = await client.call("session/new", {"cwd": str(workspace)})
    assert result["engine"] == "acp"
    return result["sessionId"]


def prompt(session_id, text):
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def updates_of(client, kind):
    return [u["update"] for u in client.updates if u["update"]["kind"] == kind]


def tool_results(fake_llm, index):
    return [m["content"] for m in fake_llm.requests[index].body["messages"] if m["role"] == "tool"]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def gone(*pids: int) -> None:
    deadline = time.monotonic() + 30
    while any(alive(p) for p in pids):
        assert time.monotonic() < deadline, f"still running: {[p for p in pids if alive(p)]}"
        await asyncio.sleep(0.05)


async def test_events_and_permissions_cross_both_hops(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(
            text="Running it.", tool_calls=[FakeToolCall("bash", {"command": "echo hi > a.txt"})]
        ),
        Reply(text="Done."),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo no > b.txt"})]),
        Reply(text="Skipped."),
    )
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        first = await client.call("session/prompt", prompt(session_id, "run it"))
        client.on_permission = lambda p: {
            "outcome": {"outcome": "selected", "optionId": "reject_once"}
        }
        second = await client.call("session/prompt", prompt(session_id, "run another"))
    finally:
        await client.close()

    assert (first["terminal"], first["stopReason"]) == ("completed", "end_turn")
    assert second["terminal"] == "completed"
    assert first["usage"]["inputTokens"] == 20
    assert (workspace / "a.txt").read_text() == "hi\n" and not (workspace / "b.txt").exists()
    text = "".join(u["text"] for u in updates_of(client, "agent_message_chunk"))
    assert text == "Running it.Done.Skipped."
    call = updates_of(client, "tool_call")[0]
    assert (call["name"], call["toolKind"], call["title"]) == (
        "bash",
        "execute",
        "Run `echo hi > a.txt`",
    )
    assert call["input"] == {"command": "echo hi > a.txt"}
    statuses = [u["status"] for u in updates_of(client, "tool_call_update")]
    assert statuses == ["in_progress", "completed", "denied"]
    asked = client.permission_requests[0]
    assert asked["toolCall"]["name"] == "bash"
    assert [o["optionId"] for o in asked["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert len(updates_of(client, "turn_end")) == 2


async def test_an_agent_turn_ends_with_a_step_finish(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="One."), Reply(text="Two."))
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        results = [await client.call("session/prompt", prompt(session_id, t)) for t in "ab"]
    finally:
        await client.close()
    kinds = [u["update"]["kind"] for u in client.updates]
    steps = updates_of(client, "step_finish")
    assert [s["step"] for s in steps] == [1, 1], "each turn counts its own steps"
    assert [s["finishReason"] for s in steps] == ["end_turn", "end_turn"]
    assert [s["usage"] for s in steps] == [r["usage"] for r in results]
    assert kinds.index("step_finish") < kinds.index("turn_end")


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
    asked = client.question_requests[0]["questions"]
    assert asked == [
        {
            "question": "Which runner?",
            "header": "Runner",
            "options": [{"label": "pytest"}, {"label": "unittest"}],
            "multiSelect": False,
        }
    ]
    assert "Which runner? → unittest" in tool_results(fake_llm, 1)[0]


async def test_cancel_crosses_both_hops(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["slow"] * 100), chunk_delay=0.05), Reply(text="fresh"))
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        turn = asyncio.ensure_future(client.call("session/prompt", prompt(session_id, "talk")))
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk")
        client.notify("session/cancel", {"sessionId": session_id})
        cancelled = await asyncio.wait_for(turn, 60)
        again = await client.call("session/prompt", prompt(session_id, "again"))
    finally:
        await client.close()

    assert (cancelled["terminal"], cancelled["stopReason"]) == ("aborted", "cancelled")
    assert again["terminal"] == "completed"
    ends = [u["terminal"] for u in updates_of(client, "turn_end")]
    assert ends == ["aborted", "completed"]


async def test_a_failing_agent_turn_is_one_failed_terminal(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(status=400, error_message="bad request"))
    client = await outer(tmp_path, fake_llm)
    try:
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "hi"))
    finally:
        await client.close()
    assert result["terminal"] == "failed" and "bad request" in result["error"]
    assert [u["terminal"] for u in updates_of(client, "turn_end")] == ["failed"]


async def test_an_agent_that_cannot_start_fails_session_new(tmp_path, workspace, fake_llm):
    client = await outer(tmp_path, fake_llm, command=["/nonexistent/agent", "--acp"])
    try:
        engines = await client.call("engines/list", {})
        error = None
        try:
            await client.call("session/new", {"cwd": str(workspace)})
        except Exception as exc:
            error = exc
    finally:
        await client.close()
    acp_info = next(e for e in engines["engines"] if e["id"] == "acp")
    assert acp_info["available"] is False
    assert "/nonexistent/agent" in str(error)


# -- the process group, in process --------------------------------------------------------


class Channel:
    capabilities = ClientCapabilities()

    def __init__(self):
        self.updates = []

    def send_update(self, params):
        self.updates.append(params.update)


def service_with(command, tmp_path, fake_llm) -> SessionService:
    env = fake_env(tmp_path, fake_llm)
    engine = AcpEngine(ExternalSettings(command=command), environ=env, cancel_grace=1.0)
    return SessionService({"acp": engine}, Channel())


async def test_close_kills_the_agent_process_group(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="hi"))
    service = service_with(INNER, tmp_path, fake_llm)
    info = await service.new_session(NewSessionParams(cwd=str(workspace), engine="acp"))
    handle = service.get(info.session_id).handle
    pid = handle.peer.pid
    assert os.getpgid(pid) == pid
    params = PromptParams.model_validate(prompt(info.session_id, "hi"))
    assert (await service.prompt(params)).terminal == "completed"
    await service.close_all()
    assert not alive(pid)


async def test_an_agent_ignoring_cancel_is_killed_with_its_group(tmp_path, workspace, fake_llm):
    script = tmp_path / "stuck_agent.py"
    script.write_text(STUCK_AGENT)
    pid_file = tmp_path / "child.pid"
    service = service_with([sys.executable, str(script), str(pid_file)], tmp_path, fake_llm)
    info = await service.new_session(NewSessionParams(cwd=str(workspace), engine="acp"))
    agent_pid = service.get(info.session_id).handle.peer.pid
    params = PromptParams.model_validate(prompt(info.session_id, "hang"))
    turn = asyncio.ensure_future(service.prompt(params))
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the agent never started its child"
        await asyncio.sleep(0.05)
    child_pid = int(pid_file.read_text())
    service.cancel(info.session_id)
    result = await asyncio.wait_for(turn, 60)
    assert result.terminal == "aborted"
    await gone(agent_pid, child_pid)
    ends = [u for u in service.channel.updates if u.kind == "turn_end"]
    assert [e.terminal for e in ends] == ["aborted"]
    again = await service.prompt(PromptParams.model_validate(prompt(info.session_id, "more")))
    assert again.terminal == "failed" and "killed" in again.error
    await service.close_all()


# -- a real third-party ACP agent ---------------------------------------------------------

CLAUDE_AGENT_ACP = Path(
    os.environ.get("AGENTLS_CLAUDE_AGENT_ACP")
    or Path.home() / ".cache/agentls-ci/acp-agents/node_modules/.bin/claude-agent-acp"
)


@pytest.mark.skipif(
    not CLAUDE_AGENT_ACP.exists() or shutil.which("node") is None,
    reason="claude-agent-acp is not installed: npm install --prefix "
    "~/.cache/agentls-ci/acp-agents @zed-industries/claude-agent-acp@0.23.1",
)
async def test_claude_agent_acp_on_the_fake_anthropic_model(tmp_path, workspace, fake_llm):
    notes = workspace / "notes.txt"
    notes.write_text("hello\n")
    fake_llm.script(
        Reply(text="Reading.", tool_calls=[FakeToolCall("Read", {"file_path": str(notes)})]),
        Reply(
            tool_calls=[FakeToolCall("Bash", {"command": "echo hi > a.txt", "description": "a"})]
        ),
        Reply(text="Done."),
    )
    env = server_env(
        tmp_path,
        ANTHROPIC_BASE_URL=fake_llm.anthropic_base_url,
        ANTHROPIC_API_KEY="sk-ant-test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    # claude-agent-acp reads any IS_SANDBOX as "may bypass permissions as root", the CLI only
    # "1": with another value the CLI it starts exits at once.
    env.pop("IS_SANDBOX", None)
    client = AgentClient()
    await client.start(env, "--engine", "acp", "--engine-command", str(CLAUDE_AGENT_ACP))
    await client.initialize()
    try:
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "read notes, write a"))
    finally:
        await client.close()

    assert (result["terminal"], result["stopReason"]) == ("completed", "end_turn")
    assert (workspace / "a.txt").read_text() == "hi\n"
    text = "".join(u["text"] for u in updates_of(client, "agent_message_chunk"))
    assert text == "Reading.Done."
    calls = updates_of(client, "tool_call")
    assert [(c["name"], c["toolKind"]) for c in calls] == [
        ("read_file", "read"),
        ("bash", "execute"),
    ]
    assert [p["toolCall"]["name"] for p in client.permission_requests] == ["bash"]
    done = [
        u["status"] for u in updates_of(client, "tool_call_update") if u["status"] != "in_progress"
    ]
    assert done == ["completed", "completed"]
    assert [u["terminal"] for u in updates_of(client, "turn_end")] == ["completed"]


async def test_load_resumes_the_agent_session(tmp_path, workspace, fake_llm):
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

    assert loaded["engine"] == "acp" and result["terminal"] == "completed"
    history = [m for m in fake_llm.requests[1].body["messages"] if m["role"] != "system"]
    assert [m["role"] for m in history[:3]] == ["user", "assistant", "user"]
    assert "remember 42" in str(history[0]["content"])


def test_engine_commands_come_from_flags_environment_or_user_config():
    user = {
        "engine": "claude-code",
        "engines": {"acp": {"command": "gemini --acp", "env": {"A": 1}}},
    }
    settings = external_settings("acp", {}, {}, user)
    assert (settings.command, settings.env) == (["gemini", "--acp"], {"A": "1"})
    assert external_settings("claude-code", {}, {}, {}).command == ["claude"]
    chosen = {"engine": "claude-code", "engineCommand": "/opt/claude --x"}
    assert external_settings("claude-code", chosen, {}, user).command == ["/opt/claude", "--x"]
    assert external_settings("acp", chosen, {}, user).command == ["gemini", "--acp"]
    env = {"AGENTLS_ENGINE_COMMAND": "opencode acp"}
    assert external_settings("acp", {}, env, {}).command == ["opencode", "acp"]
    assert external_settings("acp", {}, env, user).command == ["gemini", "--acp"]


def test_an_agent_gets_the_whole_environment_but_not_our_engine_choice():
    env = peer_environment({"PATH": "/bin", "AGENTLS_ENGINE": "acp", "K": "v"}, {"X": "1"})
    assert env == {"PATH": "/bin", "K": "v", "X": "1"}

"""Interrupted turns through ACP and stream-json: the interrupted tool call is closed in the
door's own terms (ACP `tool_call_update` `failed`; stream-json a `tool_result` with `is_error`),
and the next prompt works against the strict fake, live and after a reload in a new process."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import FAKE_MODELS, server_env
from tests.test_acp_frontend import Editor, agentls_acp, text

SLOW = FakeToolCall("bash", {"command": "sleep 30"}, id="call_slow")


def env_for(tmp_path, fake_llm, wire, **extra):
    model, key, url = FAKE_MODELS[wire]
    return server_env(
        tmp_path,
        AGENTLS_PROVIDER=wire,
        AGENTLS_MODEL=model,
        AGENTLS_BASE_URL=url(fake_llm),
        AGENTLS_MAX_RETRIES="0",
        **{key: "k"},
        **extra,
    )


class WaitingEditor(Editor):
    """Asks the user and waits: a permission request is never answered."""

    def __init__(self, *, answer: bool) -> None:
        super().__init__()
        self.answer = answer
        self.asked = asyncio.Event()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.asked.set()
        if self.answer:
            return await super().request_permission(session_id, tool_call, options, **kwargs)
        await asyncio.sleep(60)


async def until(predicate, timeout=60):
    async def poll():
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


def acp_calls(updates):
    """(ids announced, ids closed) among ACP updates."""
    announced = [u.tool_call_id for u in updates if u.session_update == "tool_call"]
    closed = [
        u.tool_call_id
        for u in updates
        if u.session_update == "tool_call_update" and u.status in ("completed", "failed")
    ]
    return announced, closed


@pytest.mark.parametrize("wire", list(FAKE_MODELS))
@pytest.mark.parametrize("scenario", ["cancel_bash", "cancel_permission"])
async def test_acp_cancel_closes_the_call_and_the_session_goes_on(
    tmp_path, workspace, fake_llm, wire, scenario
):
    call = SLOW if scenario == "cancel_bash" else FakeToolCall("bash", {"command": "touch x"})
    fake_llm.script(Reply(tool_calls=[call]), Reply(text="live and well"), Reply(text="reloaded"))
    env = env_for(tmp_path, fake_llm, wire)
    editor = WaitingEditor(answer=scenario == "cancel_bash")
    async with agentls_acp(tmp_path, env, editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("go")))
        if scenario == "cancel_bash":
            await until(
                lambda: any(getattr(u, "status", "") == "in_progress" for u in editor.updates)
            )
        else:
            await asyncio.wait_for(editor.asked.wait(), 60)
        await conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(turn, 60)
        announced, closed = acp_calls(editor.updates)
        again = await conn.prompt(session_id=sid, prompt=text("again"))
    assert cancelled.stop_reason == "cancelled"
    assert announced and sorted(set(closed)) == sorted(announced)
    last = [u for u in editor.updates if u.session_update == "tool_call_update"][-1]
    assert last.status == "failed"
    assert again.stop_reason == "end_turn"

    reloaded = Editor()
    async with agentls_acp(tmp_path, env, reloaded) as (conn, _):
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        replayed = acp_calls(reloaded.updates)
        after = await conn.prompt(session_id=sid, prompt=text("after"))
    assert replayed[0] == announced and sorted(set(replayed[1])) == sorted(announced)
    assert after.stop_reason == "end_turn"
    assert fake_llm.refusals == []


class StreamJson:
    """`agentls -p` in stream-json mode over real pipes."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.frames: list[dict] = []

    @classmethod
    async def spawn(cls, env, cwd, *args) -> StreamJson:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.cli",
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        return cls(proc)

    def send(self, frame: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())

    def say(self, words: str) -> None:
        message = {"role": "user", "content": words}
        self.send({"type": "user", "message": message, "parent_tool_use_id": None})

    async def until(self, predicate, timeout=60) -> dict:
        async def read() -> dict:
            assert self.proc.stdout is not None
            while True:
                line = await self.proc.stdout.readline()
                assert line, f"stdout closed; frames: {self.frames}"
                frame = json.loads(line)
                self.frames.append(frame)
                if predicate(frame):
                    return frame

        return await asyncio.wait_for(read(), timeout)

    async def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return await asyncio.wait_for(self.proc.wait(), 30)
        except TimeoutError:
            self.proc.kill()
            return await self.proc.wait()


def is_result(frame: dict) -> bool:
    return frame.get("type") == "result"


def tool_uses(frame: dict) -> list[str]:
    content = frame.get("message", {}).get("content") if frame.get("type") == "assistant" else None
    return [b["id"] for b in content or [] if b.get("type") == "tool_use"]


def tool_results(frames: list[dict]) -> list[dict]:
    out = []
    for frame in frames:
        content = frame.get("message", {}).get("content") if frame.get("type") == "user" else None
        out += [b for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


@pytest.mark.parametrize("wire", list(FAKE_MODELS))
async def test_stream_json_interrupt_answers_the_call_and_the_session_goes_on(
    tmp_path, workspace, fake_llm, wire
):
    fake_llm.script(Reply(tool_calls=[SLOW]), Reply(text="live and well"), Reply(text="again"))
    env = env_for(tmp_path, fake_llm, wire)
    flags = ("--permission-mode", "bypassPermissions", "--session-id", "sess_c0de")
    pipe = await StreamJson.spawn(env, workspace, *flags)
    try:
        pipe.say("go")
        await pipe.until(lambda f: bool(tool_uses(f)))
        await asyncio.sleep(0.2)  # let bash start; an interrupt before it is covered as well
        pipe.send(
            {"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}}
        )
        interrupted = await pipe.until(is_result)
        first = list(pipe.frames)
        pipe.say("again")
        live = await pipe.until(is_result)
    finally:
        code = await pipe.close()
    assert interrupted["subtype"] == "error_during_execution" and code == 0
    [result] = tool_results(first)
    [use] = [i for frame in first for i in tool_uses(frame)]  # Ollama's calls get our ids
    assert (result["tool_use_id"], result["is_error"]) == (use, True)
    assert use == "call_slow" or wire == "ollama"
    assert live["subtype"] == "success" and live["result"] == "live and well"

    pipe = await StreamJson.spawn(env, workspace, "--resume", "sess_c0de")
    try:
        pipe.say("after")
        after = await pipe.until(is_result)
    finally:
        await pipe.close()
    assert after["subtype"] == "success" and after["result"] == "again"
    assert fake_llm.refusals == []

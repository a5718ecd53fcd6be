"""Turn lifecycle rules of the session service, with injected engines and the scripted model."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest

from protocol.methods import NewSessionParams, PromptParams
from protocol.updates import AgentMessageChunk
from server.engines.base import EngineCapabilities
from server.engines.native import NativeEngine
from server.providers.messages import Usage
from server.providers.scripted import ScriptedProvider, ScriptedReply
from server.sessions.model import ClientCapabilities
from server.sessions.service import ServiceError, SessionService
from server.turn import TurnOutcome


class Recorder:
    capabilities = ClientCapabilities()

    def __init__(self):
        self.updates = []

    def send_update(self, params):
        self.updates.append(params.to_wire())


class LingeringEngine:
    """Leaves a task behind that keeps emitting after the turn returned."""

    id = "lingering"
    capabilities = EngineCapabilities()

    def __init__(self, task_group):
        self.tg = task_group
        self.turn_over = anyio.Event()

    async def create_session(self, spec):
        return spec

    def describe(self, handle):
        return {"provider": "scripted", "model": "scripted", "mode": "default"}

    async def run_turn(self, handle, turn, sink):
        async def late():
            await self.turn_over.wait()
            sink.emit(AgentMessageChunk(text="too late"))

        sink.emit(AgentMessageChunk(text="in time"))
        self.tg.start_soon(late)
        return TurnOutcome("end_turn", Usage(1, 1))

    def unsent_steers(self, handle):
        return []

    async def close_session(self, handle):
        pass

    async def dispose(self):
        pass


def text_prompt(session_id, text="hi"):
    return PromptParams.model_validate(
        {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )


async def test_events_after_the_terminal_are_dropped(tmp_path):
    channel = Recorder()
    async with anyio.create_task_group() as tg:
        engine = LingeringEngine(tg)
        service = SessionService({"native": engine}, channel)
        session = await service.new_session(NewSessionParams(cwd=str(tmp_path)))
        result = await service.prompt(text_prompt(session.session_id))
        engine.turn_over.set()
    kinds = [(u["seq"], u["update"]["kind"], u["update"].get("text")) for u in channel.updates]
    assert kinds == [(1, "agent_message_chunk", "in time"), (2, "turn_end", None)]
    assert result.terminal == "completed"


async def test_seq_continues_across_turns_and_steer_reaches_the_next_call(tmp_path):
    seen = []

    def reply(request):
        seen.append([m.text for m in request.messages if m.role == "user"][:-1])
        if len(seen) == 1:
            return ScriptedReply(text="looking", tool_calls=[("list_dir", {})], delay=1.0)
        return ScriptedReply(text="done")

    provider = ScriptedProvider(reply)
    channel = Recorder()
    engine = NativeEngine(provider_factory=lambda settings: provider)
    service = SessionService({"native": engine}, channel, flags={"llm": {"provider": "scripted"}})
    session = await service.new_session(NewSessionParams(cwd=str(tmp_path)))
    async with anyio.create_task_group() as tg:
        tg.start_soon(service.prompt, text_prompt(session.session_id, "first"))
        with anyio.fail_after(60):
            while not seen:  # the first model call has started
                await anyio.sleep(0.005)
        service.steer(session.session_id, "also check the tests")
    await service.prompt(text_prompt(session.session_id, "second"))
    assert seen[1] == ["first", "also check the tests"]
    seqs = [u["seq"] for u in channel.updates]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len({u["turnId"] for u in channel.updates}) == 2
    steer = [u["update"] for u in channel.updates if u["update"]["kind"] == "user_message_chunk"]
    assert steer == [{"kind": "user_message_chunk", "text": "also check the tests"}]


async def test_set_model_applies_to_the_next_call(tmp_path):
    provider = ScriptedProvider(lambda request: ScriptedReply(text=request.model))
    engine = NativeEngine(provider_factory=lambda settings: provider)
    service = SessionService(
        {"native": engine}, Recorder(), flags={"llm": {"provider": "scripted"}}
    )
    session = await service.new_session(NewSessionParams(cwd=str(tmp_path)))
    service.set_model(session.session_id, "scripted-large")
    await service.prompt(text_prompt(session.session_id))
    assert [r.model for r in provider.requests] == ["scripted-large"]
    with pytest.raises(ServiceError) as err:
        service.set_mode(session.session_id, "yolo")
    assert err.value.code == -32602


async def test_unsupported_image_fails_the_turn_not_the_session(tmp_path):
    engine = NativeEngine(
        provider_factory=lambda s: ScriptedProvider(lambda r: ScriptedReply(text="ok"))
    )
    service = SessionService(
        {"native": engine}, Recorder(), flags={"llm": {"provider": "scripted"}}
    )
    session = await service.new_session(NewSessionParams(cwd=str(tmp_path)))
    bad = PromptParams.model_validate(
        {
            "sessionId": session.session_id,
            "prompt": [{"type": "image", "data": "AAAA", "mimeType": "image/tiff"}],
        }
    )
    failed = await service.prompt(bad)
    ok = await service.prompt(text_prompt(session.session_id))
    assert failed.terminal == "failed" and "image/tiff" in failed.error
    assert ok.terminal == "completed"


def test_serving_imports_no_provider_sdk():
    code = (
        "import sys, server.cli, server.frontends.jsonrpc, server.sessions.service, "
        "server.engines.native, server.tools.registry\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"

"""What a new session prepares while the user types its first prompt: its tools' input
schemas and its provider (the SDK imported, then the client built by the session's own
factory), so that first prompt waits for neither."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server import background
from server.agent.state import AgentSession
from server.engines import native
from server.engines.native import NativeEngine
from server.providers import registry
from server.providers.messages import Message, ProviderError, TextPart
from server.providers.scripted import ScriptedProvider, ScriptedReply
from server.turn import SessionSpec, TurnInput

DEADLINE_S = 60.0
ENV = {"OPENAI_API_KEY": "k"}


async def until(check) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    while not check() and loop.time() < deadline:
        await asyncio.sleep(0.01)
    return bool(check())


def spec(tmp_path: Path, session_id: str = "s") -> SessionSpec:
    return SessionSpec(session_id=session_id, cwd=tmp_path, config={"llm": {"model": "gpt-5.5"}})


@pytest.fixture
def loop_errors() -> list[dict]:
    return []


async def watched(errors: list[dict]) -> None:
    asyncio.get_running_loop().set_exception_handler(lambda _loop, context: errors.append(context))


async def test_a_new_session_builds_its_tool_schemas_and_provider_before_any_prompt(
    tmp_path: Path, monkeypatch, loop_errors
) -> None:
    await watched(loop_errors)
    built: list[str] = []
    original = AgentSession.tool_specs

    def recording(self):
        specs = original(self)
        built.extend(s.name for s in specs)
        return specs

    monkeypatch.setattr(AgentSession, "tool_specs", recording)
    made: list[object] = []

    def factory(settings):
        made.append(object())
        return made[-1]

    engine = NativeEngine(provider_factory=factory, environ={**ENV, "HOME": str(tmp_path)})
    session = await engine.create_session(spec(tmp_path))
    assert await until(lambda: bool(built)), "no tool schemas were built"
    assert {"read_file", "bash"} <= set(built)
    assert await until(lambda: bool(made)), "the provider was not built"
    assert session.provider() is made[0] and len(made) == 1  # the prompt uses the one built
    assert loop_errors == []


async def test_a_provider_that_cannot_be_built_is_left_to_the_prompt_and_tried_once_ahead(
    tmp_path: Path, loop_errors
) -> None:
    await watched(loop_errors)
    calls: list[str] = []

    def factory(settings):
        calls.append(settings.model)
        raise ProviderError("openai: no key")

    engine = NativeEngine(provider_factory=factory, environ={**ENV, "HOME": str(tmp_path)})
    first = await engine.create_session(spec(tmp_path, "a"))
    assert await until(lambda: bool(calls))
    second = await engine.create_session(spec(tmp_path, "b"))
    for _ in range(20):
        await asyncio.sleep(0)  # the second session's build, if any, would run by now
    assert calls == ["gpt-5.5"]
    for session in (first, second):
        with pytest.raises(ProviderError, match="no key"):
            session.provider()  # the first model call reports it
    assert loop_errors == []


class Sink:
    session_id, turn_id = "s", "t1"

    def emit(self, update) -> None:
        pass


@pytest.mark.parametrize("typing", [True, False])
async def test_the_shell_parser_is_imported_ahead_only_while_the_user_types(
    tmp_path: Path, monkeypatch, typing: bool
) -> None:
    """A prompt that came with the session (a one-shot run's) imports the parser when a command
    first needs it: a run that never runs one never pays for it."""
    warmed: list[str] = []
    monkeypatch.setattr(native, "WHILE_TYPING_AFTER_S", 0)
    monkeypatch.setattr(native.shell_policy, "warm", lambda: warmed.append("bashlex"))
    scripted = ScriptedProvider.from_replies([ScriptedReply(text="Hello.")])
    engine = NativeEngine(
        provider_factory=lambda s: scripted, environ={**ENV, "HOME": str(tmp_path)}
    )
    session = await engine.create_session(spec(tmp_path))
    if not typing:
        outcome = await engine.run_turn(session, TurnInput("t1", "at once"), Sink())
        assert outcome.stop_reason == "end_turn"
    for _ in range(20):
        await asyncio.sleep(0)
    assert warmed == (["bashlex"] if typing else [])


async def test_a_resumed_session_prepares_ahead_too(tmp_path: Path, monkeypatch) -> None:
    warmed: list[str] = []
    monkeypatch.setattr(native, "WHILE_TYPING_AFTER_S", 0)
    monkeypatch.setattr(native.shell_policy, "warm", lambda: warmed.append("bashlex"))
    engine = NativeEngine(
        provider_factory=lambda s: object(), environ={**ENV, "HOME": str(tmp_path)}
    )
    first = await engine.create_session(spec(tmp_path, "a"))
    first.prompted = True  # its turn ran: it prepares nothing more
    first.history.append(Message("user", [TextPart("earlier")]))
    snapshot = engine.snapshot(first)
    await engine.restore(spec(tmp_path, "b"), snapshot)
    for _ in range(20):
        await asyncio.sleep(0)
    assert warmed == ["bashlex"]


async def test_a_session_switched_to_another_provider_is_not_built_before_that_sdk_is_in(
    tmp_path: Path, monkeypatch, loop_errors
) -> None:
    """Its first SDK's import ended after a switch (/model) to a provider whose SDK is not in:
    building that provider on the loop would import the other SDK there, stalling every
    session, so its import is queued instead and the build follows it."""
    await watched(loop_errors)
    made: list[str] = []
    engine = NativeEngine(
        provider_factory=lambda s: made.append(s.provider), environ={**ENV, "HOME": str(tmp_path)}
    )
    session = await engine.create_session(spec(tmp_path))
    assert await until(lambda: bool(made))
    made.clear()
    session._provider = None
    monkeypatch.setitem(registry.SDK_MODULES, "openai", "agentls_no_such_sdk")
    engine._build_provider(session)
    background.ready("agentls_no_such_sdk")
    for _ in range(20):
        await asyncio.sleep(0)
    assert made == []
    assert loop_errors == []


async def test_a_session_closed_before_its_sdk_is_in_builds_nothing(tmp_path: Path) -> None:
    made: list[str] = []
    engine = NativeEngine(
        provider_factory=lambda s: made.append(s.model), environ={**ENV, "HOME": str(tmp_path)}
    )
    session = await engine.create_session(spec(tmp_path))
    await engine.close_session(session)
    background.ready("openai")
    for _ in range(20):
        await asyncio.sleep(0)
    assert made == []

"""What a new session prepares while the user types its first prompt: its tools' input
schemas and its provider (the SDK imported, the client built), so that first prompt waits for
neither."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.agent.state import AgentSession
from server.engines.native import NativeEngine
from server.providers import registry
from server.turn import SessionSpec

DEADLINE_S = 60.0


async def until(check) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    while not check() and loop.time() < deadline:
        await asyncio.sleep(0.01)
    return bool(check())


async def test_a_new_session_builds_its_tool_schemas_and_provider_before_any_prompt(
    tmp_path: Path, monkeypatch
) -> None:
    built: list[str] = []
    original = AgentSession.tool_specs

    def recording(self):
        specs = original(self)
        built.extend(s.name for s in specs)
        return specs

    monkeypatch.setattr(AgentSession, "tool_specs", recording)
    engine = NativeEngine(environ={"OPENAI_API_KEY": "k", "HOME": str(tmp_path)})
    spec = SessionSpec(session_id="s", cwd=tmp_path, config={"llm": {"model": "gpt-5.5"}})
    session = await engine.create_session(spec)
    loop = asyncio.get_running_loop()
    assert await until(lambda: bool(built)), "no tool schemas were built"
    assert {"read_file", "bash"} <= set(built)
    assert await until(lambda: session.settings in registry._SHARED.get(loop, {}))
    assert registry.create_provider(session.settings) is registry._SHARED[loop][session.settings]

"""The engine contract. Every engine (native loop, external ACP agent, Claude Code) implements it.

The session service owns the turn lifecycle (tokens, seq, deadline, cancel scope, the one
terminal); an engine only runs a turn and reports what happens through the `TurnSink`.
Cancellation reaches the engine as anyio cancellation of `run_turn`; `abort` is the cooperative
half for engines that must also tell a peer process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from server.turn import SessionSpec, TurnInput, TurnOutcome, TurnSink


class EngineError(Exception):
    """The engine cannot start or cannot serve this session; the message says why."""


@dataclass(frozen=True)
class EngineCapabilities:
    images: bool = True
    thinking: bool = True
    steer: bool = True


class EngineDriver(Protocol):
    id: str
    capabilities: EngineCapabilities

    async def start(self) -> None: ...

    async def create_session(self, spec: SessionSpec) -> Any: ...

    async def run_turn(self, handle: Any, turn: TurnInput, sink: TurnSink) -> TurnOutcome: ...

    def steer(self, handle: Any, text: str) -> None: ...

    def set_model(self, handle: Any, model: str) -> None: ...

    def set_mode(self, handle: Any, mode: str) -> None: ...

    def describe(self, handle: Any) -> dict[str, str]:
        """`{"provider", "model", "mode"}` of the session as it stands."""
        ...

    def snapshot(self, handle: Any) -> dict[str, Any]:
        """What resuming the session needs, JSON-able: at least `provider`, `model`, `mode`;
        `history` (normalized messages as dicts) for engines that keep the conversation."""
        ...

    async def restore(self, spec: SessionSpec, snapshot: dict[str, Any]) -> Any:
        """A new handle for `spec` carrying on from `snapshot` (as `snapshot` returned it)."""
        ...

    async def abort(self, handle: Any) -> None: ...

    async def close_session(self, handle: Any) -> None: ...

    async def dispose(self) -> None: ...

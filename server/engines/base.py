"""The engine contract. Every engine (native loop, external ACP agent, Claude Code) implements it.

The session service owns the turn lifecycle (tokens, seq, deadline, cancel scope, the one
terminal); an engine only runs a turn and reports what happens through the `TurnSink`.
Cancellation reaches the engine as anyio cancellation of `run_turn`; `abort` is the cooperative
half for engines that must also tell a peer process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from protocol.methods import (
    AskQuestionResult,
    PermissionOption,
    Question,
    RequestPermissionResult,
    ToolCallRef,
)
from protocol.updates import SessionUpdateKind, StopReason
from server.providers.messages import ImagePart, Usage


class EngineError(Exception):
    """The engine cannot start or cannot serve this session; the message says why."""


class UserNotReachable(Exception):
    """No interactive client can answer (capability not advertised, or none attached)."""


@dataclass
class SessionSpec:
    session_id: str
    cwd: Path
    config: dict[str, Any]
    """The merged configuration for this session's workspace."""
    mode: str = "default"
    subagent: str | None = None


@dataclass
class TurnInput:
    turn_id: str
    text: str
    images: list[ImagePart] = field(default_factory=list)
    images_first: bool = False
    """The prompt opened with an image: the model gets the images before the text."""
    model: str | None = None
    think: str | bool | None = None
    thinking_budget: int | None = None


@dataclass
class TurnOutcome:
    stop_reason: StopReason
    usage: Usage


@dataclass(frozen=True)
class EngineCapabilities:
    images: bool = True
    thinking: bool = True
    steer: bool = True


class TurnSink(Protocol):
    """Where a running turn reports. Everything sent after the turn's terminal is dropped."""

    session_id: str
    turn_id: str

    def emit(self, update: SessionUpdateKind) -> None: ...

    async def request_permission(
        self, tool_call: ToolCallRef, options: list[PermissionOption]
    ) -> RequestPermissionResult: ...

    async def ask_question(
        self, questions: list[Question], *, timeout: float
    ) -> AskQuestionResult: ...


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

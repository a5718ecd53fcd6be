"""What the session service keeps per session and turn, and how it reaches the client."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import anyio

from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionUpdateParams,
)
from server.engines.base import EngineDriver
from server.providers.messages import Usage as ProviderUsage


@dataclass(frozen=True)
class ClientCapabilities:
    questions: bool = False
    permissions: bool = False
    images: bool = False
    diffs: bool = False
    report_turns: bool = False
    """It shows turns it did not prompt (so background subagents may outlive their turn)."""


class ClientChannel(Protocol):
    """The front door's side: how the service reaches the connected client."""

    capabilities: ClientCapabilities

    def send_update(self, params: SessionUpdateParams) -> None: ...

    async def request_permission(
        self, params: RequestPermissionParams
    ) -> RequestPermissionResult: ...

    async def ask_question(self, params: AskQuestionParams) -> AskQuestionResult: ...


@dataclass
class Turn:
    id: str
    live: bool = True
    scope: anyio.CancelScope | None = None
    billed: ProviderUsage = field(default_factory=ProviderUsage)
    """The usage of the model calls that finished (`step_finish`), for a turn that does not."""
    ended: anyio.Event = field(default_factory=anyio.Event)
    """Set once the turn's end is written and sent."""
    origin: Literal["user", "report"] = "user"
    """`report`: the server started it for background subagents' reports."""


@dataclass
class Session:
    id: str
    cwd: Path
    config: dict[str, Any]
    engine: EngineDriver
    handle: Any
    seq: int = 0
    turn: Turn | None = None
    updated_at: float = field(default_factory=time.time)
    turn_ids: list[str] = field(default_factory=list)
    """The turns this process ran, in order (a store knows all of them)."""

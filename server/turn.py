"""The turn contract: what a session is started with, what a turn is given, where it reports
and how it ends. The agent loop, the tools and every engine speak it; the session service owns
the turn lifecycle around it (see `server.engines.base`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from protocol.methods import (
    AskQuestionResult,
    PermissionOption,
    Question,
    RequestPermissionResult,
    ToolCallRef,
)
from protocol.updates import SessionUpdateKind, StopReason
from server.providers.messages import ImagePart, Usage


class UserNotReachable(Exception):
    """No interactive client can answer (capability not advertised, or none attached).
    `hint`, when given, tells the model what to do instead (e.g. ask in the chat)."""

    def __init__(self, message: str = "", *, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


class SessionSearch(Protocol):
    """Full-text search over the user's stored sessions (the session store), which the model
    may use through `search_sessions`."""

    async def flush(self) -> None: ...

    def search(self, query: str, limit: int, *, exclude: str | None = None) -> list[Any]: ...

    def session(self, sid: str) -> Any: ...


class SessionHost(Protocol):
    """What the session service offers work that outlives the turn that started it (background
    subagents). Given only when the client shows turns it did not prompt."""

    def wake(self) -> None:
        """The session has input of its own (a finished background subagent): once no turn
        runs, the service asks for it (`SessionOffer.background`) and runs a turn with it."""
        ...

    def sink_after(self, turn_id: str) -> TurnSink:
        """Where that work reports once turn `turn_id` has ended: updates join the session's
        running turn (dropped while none runs), permission requests and questions still reach
        the user."""
        ...


@dataclass
class SessionSpec:
    session_id: str
    cwd: Path
    config: dict[str, Any]
    """The merged configuration for this session's workspace."""
    mode: str = "default"
    subagent: str | None = None
    search: SessionSearch | None = None
    """Where `search_sessions` searches; None when the server stores no sessions."""
    host: SessionHost | None = None
    """None: work a turn starts ends with that turn."""


@dataclass
class TurnInput:
    turn_id: str
    text: str
    typed: tuple[tuple[int, int], ...] | None = None
    """Where in `text` the user's own words are (image paths are detected only there); None:
    all of it. The rest is context the editor attached."""
    images: list[ImagePart] = field(default_factory=list)
    images_first: bool = False
    """The prompt opened with an image: the model gets the images before the text."""
    model: str | None = None
    think: str | bool | None = None
    thinking_budget: int | None = None
    provider_options: dict[str, Any] | None = None
    """This turn's provider options (`llm.providerOptions` layout), over the configured ones."""
    origin: Literal["user", "report"] = "user"
    """`report`: `text` is background subagents' reports, taken as the model's next message
    as it is (no slash commands, no image paths)."""


@dataclass
class TurnOutcome:
    stop_reason: StopReason
    usage: Usage


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


class ForwardingSink:
    """A sink in front of another (`inner`) that passes everything on; subclasses change what
    they pass."""

    def __init__(self, inner: TurnSink):
        self.inner = inner
        self.session_id, self.turn_id = inner.session_id, inner.turn_id

    def emit(self, update: SessionUpdateKind) -> None:
        self.inner.emit(update)

    async def request_permission(
        self, tool_call: ToolCallRef, options: list[PermissionOption]
    ) -> RequestPermissionResult:
        return await self.inner.request_permission(tool_call, options)

    async def ask_question(self, questions: list[Question], *, timeout: float) -> AskQuestionResult:
        return await self.inner.ask_question(questions, timeout=timeout)

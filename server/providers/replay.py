"""A provider that plays back recorded model calls (offline replay of a trace).

Each `stream` call plays the next recorded call of whoever asks (the turn itself, or one of its
subagents, when the recording says whose each call was): its events in order, then the error it
ended with, if any. The request is kept but not consulted: the replay reproduces what the model said,
whatever it is asked. When the recording runs out the call fails, so a replay that diverges
ends instead of inventing answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio

from server.providers.messages import ModelRequest, ProviderError, StreamEvent


@dataclass
class RecordedCall:
    """One model call as it was streamed."""

    events: list[StreamEvent] = field(default_factory=list)
    error: str | None = None
    status: int | None = None
    retryable: bool = False
    subagent: str | None = None
    """The id of the subagent that made the call; None: the turn itself."""


class ReplayProvider:
    name = "replay"

    def __init__(
        self, calls: list[RecordedCall], *, asking: Callable[[], str | None] = lambda: None
    ):
        """`asking`: the id of the subagent making a call (None: the turn itself)."""
        self._calls = list(calls)
        self._asking = asking
        self._by_caller = any(c.subagent for c in calls)
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._calls)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        call = self._next()
        if call is None:
            raise ProviderError("replay: the trace has no recorded model call left")
        for event in call.events:
            await anyio.lowlevel.checkpoint()
            yield event
        if call.error is not None:
            raise ProviderError(call.error, status=call.status, retryable=call.retryable)

    def _next(self) -> RecordedCall | None:
        if not self._by_caller:  # an older trace: the calls in the order they were made
            return self._calls.pop(0) if self._calls else None
        who = self._asking()
        for i, call in enumerate(self._calls):
            if call.subagent == who:
                return self._calls.pop(i)
        return None

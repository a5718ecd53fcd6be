"""A provider that plays back recorded model calls (offline replay of a trace).

Each `stream` call plays the next recorded call: its events in order, then the error it ended
with, if any. The request is kept but not consulted: the replay reproduces what the model said,
whatever it is asked. When the recording runs out the call fails, so a replay that diverges
ends instead of inventing answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
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


class ReplayProvider:
    name = "replay"

    def __init__(self, calls: list[RecordedCall]):
        self._calls = list(calls)
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._calls)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if not self._calls:
            raise ProviderError("replay: the trace has no recorded model call left")
        call = self._calls.pop(0)
        for event in call.events:
            await anyio.lowlevel.checkpoint()
            yield event
        if call.error is not None:
            raise ProviderError(call.error, status=call.status, retryable=call.retryable)

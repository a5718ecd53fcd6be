"""Tracing model calls at the engine boundary, without touching any provider module.

`recording_factory(create_provider)` wraps every provider a native session builds. While the
session service runs a turn it sets `current_turn` (a context variable, so concurrent turns never
mix); each model call then writes a `provider_request` and a `provider_response` trace row
(every stream event, consecutive text deltas as one list of texts, or the error that ended the
call); a subagent's calls carry `subagent` (its id, profile and the `task` call that started
it). A request's system prompt, tool names and options are written when they differ from that
agent's previous request, else named in `unchanged`. Outside a traced turn the wrapper only
passes through.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.agent.subagents import running_subagent
from server.providers.base import Provider, ProviderFactory, ProviderSettings
from server.providers.codec import REPEATABLE, add_event, request_to_dict
from server.providers.messages import Message, ModelRequest, ProviderError, StreamEvent

if TYPE_CHECKING:
    from server.sessions.store import Store


@dataclass(frozen=True)
class TraceTarget:
    store: Store
    session_id: str
    turn_id: str


current_turn: ContextVar[TraceTarget | None] = ContextVar("agentls_trace_turn", default=None)


@contextmanager
def tracing(target: TraceTarget) -> Iterator[None]:
    token = current_turn.set(target)
    try:
        yield
    finally:
        current_turn.reset(token)


class RecordingProvider:
    """A provider that writes each call it passes through to the current turn's trace."""

    def __init__(self, inner: Provider):
        self.inner = inner
        self.name = inner.name
        self._previous: list[Message] = []
        self._last: dict[str | None, dict[str, Any]] = {}
        """The repeatable parts of the previous request, per agent (None: the session's own)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        target = current_turn.get()
        if target is None:
            async for event in self.inner.stream(request):
                yield event
            return
        reused = self._reused(request.messages)
        self._previous = list(request.messages)
        trace = target.store.record_trace
        subagent = running_subagent.get()
        who = {"subagent": subagent.to_trace()} if subagent else {}
        agent = subagent.id if subagent else None
        written = request_to_dict(request, reused=reused, previous=self._last.get(agent))
        self._last[agent] = {**self._last.get(agent, {}), **pick(written, REPEATABLE)}
        trace(target.session_id, target.turn_id, "provider_request", {**written, **who})
        started = time.monotonic()
        events: list[dict[str, Any]] = []
        outcome: dict[str, Any] = {"complete": False}
        try:
            async for event in self.inner.stream(request):
                add_event(events, event)
                yield event
            outcome["complete"] = True
        except ProviderError as exc:
            outcome["error"] = {
                "message": str(exc),
                "status": exc.status,
                "retryable": exc.retryable,
            }
            raise
        finally:
            outcome["seconds"] = round(time.monotonic() - started, 4)
            trace(
                target.session_id,
                target.turn_id,
                "provider_response",
                {"events": events, **outcome, **who},
            )

    def _reused(self, messages: list[Message]) -> int:
        """How many leading messages equal those of the previous call."""
        count = 0
        for old, new in zip(self._previous, messages, strict=False):
            if old != new:
                break
            count += 1
        return count


def pick(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: data[k] for k in keys if k in data}


def recording_factory(inner: ProviderFactory) -> ProviderFactory:
    def factory(settings: ProviderSettings) -> Provider:
        return RecordingProvider(inner(settings))

    return factory

"""Retrying a model call on transient failures: 429, 5xx, a dropped connection, a cut stream.

A retry restarts the call from scratch. Before each new attempt the stream yields a
`StreamRestart`; the consumer must throw away everything the failed attempt streamed (text,
thinking, tool calls), so nothing is ever duplicated in the history. The error that ends the
call carries the usage of all its attempts. Waits grow exponentially with jitter; a server's
`retry-after` is honoured as long as it is not longer than `max_wait`.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio

from server.providers.base import Provider
from server.providers.messages import ModelRequest, ProviderError, StreamEvent, Usage


@dataclass
class StreamRestart:
    """The previous attempt failed with `error`; a new one starts after `delay` seconds."""

    attempt: int
    delay: float
    error: str
    kind: Literal["restart"] = "restart"
    usage: Usage | None = None
    """What the failed attempt reported it used."""


@dataclass
class RetryPolicy:
    """`max_retries` retries after the first attempt; `base * 2**(n-1)` seconds before retry n,
    capped at `cap`, times a random factor in [0.5, 1]."""

    max_retries: int = 2
    base: float = 0.5
    cap: float = 20.0
    max_wait: float = 60.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before retry `attempt` (1-based), or None to give up."""
        if not error.retryable or attempt > self.max_retries:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_wait else None
        backoff = min(self.cap, self.base * 2 ** (attempt - 1))
        return backoff * self.rng.uniform(0.5, 1.0)


Sleep = Callable[[float], Awaitable[None]]


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    policy: RetryPolicy,
    *,
    sleep: Sleep = anyio.sleep,
) -> AsyncIterator[StreamEvent | StreamRestart]:
    """`provider.stream(request)`, restarted on retryable errors; the last error is raised with
    the number of attempts made."""
    attempt = 0
    billed = Usage()
    while True:
        try:
            async for event in provider.stream(request):
                yield event
            return
        except ProviderError as exc:
            attempt += 1
            billed += exc.usage or Usage()
            delay = policy.delay(attempt, exc)
            if delay is None and attempt == 1:
                raise
            if delay is None:
                raise _gave_up(exc, attempt, billed) from exc
            restart = StreamRestart(attempt, round(delay, 3), str(exc), usage=exc.usage)
        yield restart
        await sleep(delay)


def _gave_up(exc: ProviderError, attempts: int, billed: Usage) -> ProviderError:
    error = ProviderError(
        f"{exc} (gave up after {attempts} attempts)",
        status=exc.status,
        retryable=exc.retryable,
        retry_after=exc.retry_after,
    )
    error.usage = billed
    return error

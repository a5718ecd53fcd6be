"""What a running tool has produced so far, for the client's card while it runs.

The agent sets `LIVE_OUTPUT` around each tool call to a function that sends an in-progress
`tool_call_update`; a tool that produces output over time (a command) reports the tail of what
it has so far: the first output at once, then at most every `LIVE_INTERVAL_S`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

import anyio

LIVE_INTERVAL_S = 0.25
LIVE_TAIL_CHARS = 8_000

LIVE_OUTPUT: ContextVar[Callable[[str], None] | None] = ContextVar("LIVE_OUTPUT", default=None)


class LiveFeed:
    """Output as it arrives, and a loop that reports its tail when it has grown."""

    def __init__(self, tail: Callable[[int], str]) -> None:
        self._tail = tail
        self._grown = anyio.Event()

    def grew(self) -> None:
        self._grown.set()

    async def report(self, send: Callable[[str], None]) -> None:
        while True:
            await self._grown.wait()
            self._grown = anyio.Event()
            send(self._tail(LIVE_TAIL_CHARS))
            await anyio.sleep(LIVE_INTERVAL_S)

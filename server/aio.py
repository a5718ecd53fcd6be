"""Awaiting work that a cancel must not cut short.

An anyio shield (`CancelScope(shield=True)`) holds back only anyio's own cancellation. A native
`Task.cancel()` (a pygls handler on `$/cancelRequest`, `asyncio.wait_for`, another library's task
group) goes straight through it. `run_to_end` runs the work in a task of its own, which no cancel
of the caller reaches, and lets the caller's cancel go on once the work is done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import anyio

T = TypeVar("T")


async def run_to_end(work: Awaitable[T]) -> T:
    """Await `work` to its end even if the caller is cancelled meanwhile, then re-raise the
    cancel (if any); otherwise return its result or raise its error."""
    task = asyncio.ensure_future(work)
    cancel: BaseException | None = None
    with anyio.CancelScope(shield=True):
        while not task.done():
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError as exc:
                cancel = exc
    if cancel is not None:
        raise cancel
    return task.result()

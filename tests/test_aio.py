"""`run_to_end`: cleanup that a native `Task.cancel()` cannot cut short (an anyio shield can)."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from server.aio import run_to_end


async def cleanup(started: asyncio.Event, release: asyncio.Event, done: list[str]) -> str:
    started.set()
    await release.wait()
    done.append("cleaned")
    return "result"


async def test_a_native_cancel_waits_for_the_work_then_goes_on():
    started, release, done = asyncio.Event(), asyncio.Event(), []
    task = asyncio.ensure_future(run_to_end(cleanup(started, release, done)))
    await asyncio.wait_for(started.wait(), 30)
    task.cancel()
    task.cancel()
    await asyncio.sleep(0)
    assert not task.done() and done == []
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    assert done == ["cleaned"]


async def test_a_cancelled_scope_waits_for_the_work_then_goes_on():
    started, release, done = asyncio.Event(), asyncio.Event(), []
    with anyio.CancelScope() as scope:
        scope.cancel()
        release.set()
        await run_to_end(cleanup(started, release, done))
        await anyio.sleep(30)
    assert scope.cancelled_caught and done == ["cleaned"]


async def test_the_result_and_the_error_come_back():
    async def fails() -> None:
        raise ValueError("boom")

    assert await run_to_end(asyncio.sleep(0, result=7)) == 7
    with pytest.raises(ValueError, match="boom"):
        await run_to_end(fails())

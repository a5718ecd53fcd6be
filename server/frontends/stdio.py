"""Reading stdin without blocking the event loop or holding the process open at exit."""

from __future__ import annotations

import array
import asyncio
import itertools
import json
import os
import re
import signal
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, Protocol

STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def cancel_on_signals(task: asyncio.Task | None, received: list[int]) -> None:
    """SIGINT, SIGTERM and SIGHUP cancel `task` (the door's main task: its turns end `aborted`,
    stored, their commands killed) and are appended to `received`; a second one stops at once.
    Handled whatever the process inherited: a background job of a non-interactive shell starts
    with SIGINT ignored."""
    loop = asyncio.get_running_loop()

    def handle(signum: int) -> None:
        received.append(signum)
        if len(received) > 1:
            raise KeyboardInterrupt
        if task is not None:
            task.cancel()

    for name in STOP_SIGNALS:
        if hasattr(signal, name):
            try:
                loop.add_signal_handler(getattr(signal, name), handle, getattr(signal, name))
            except (NotImplementedError, RuntimeError):  # Windows, or not the main thread
                pass


class Chunks(Protocol):
    """A byte stream read a chunk at a time; `next()` returns b"" at its end."""

    async def next(self) -> bytes: ...


class StdinChunks:
    """Reads a byte stream on a daemon thread; `next()` returns b"" at end of input."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, args=(loop,), daemon=True).start()

    def _pump(self, loop: asyncio.AbstractEventLoop) -> None:
        read = self._reader()
        while True:
            try:
                chunk = read(65536)
            except (OSError, ValueError):
                chunk = b""
            loop.call_soon_threadsafe(self._queue.put_nowait, chunk)
            if not chunk:
                return

    def _reader(self):
        # os.read on the descriptor: a daemon thread blocked inside a *buffered* read holds the
        # buffer's lock, and interpreter shutdown then aborts the process.
        try:
            fd = self._stream.fileno()
        except (AttributeError, OSError, ValueError):
            return getattr(self._stream, "read1", self._stream.read)
        return lambda n: os.read(fd, n)

    async def next(self) -> bytes:
        return await self._queue.get()


async def read_lines(chunks: Chunks, *, limit: int) -> AsyncIterator[bytes | None]:
    """NDJSON lines as bytes (multibyte characters may span reads). A line longer than
    `limit` is skipped and reported as None."""
    buf = bytearray()
    skipping = False
    while True:
        chunk = await chunks.next()
        if not chunk:
            if buf and not skipping:
                yield bytes(buf)
            return
        buf += chunk
        while (end := buf.find(b"\n")) >= 0:
            line = bytes(buf[:end])
            del buf[: end + 1]
            if skipping:
                skipping = False
                continue
            yield line
        if len(buf) > limit:
            if not skipping:
                yield None
            skipping = True
            buf.clear()


MAX_DEPTH = 256
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def parse_json(data: bytes | str) -> Any:
    """`json.loads` for input from outside: nesting deeper than MAX_DEPTH is refused before
    parsing (deep input would raise RecursionError here or in whatever walks it later).
    Anything unusable raises ValueError."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and depth(raw) > MAX_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def depth(raw: bytes) -> int:
    """The deepest bracket nesting of a JSON text, strings skipped (computed in C loops)."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS).translate(_STEPS)
    return max(itertools.accumulate(array.array("b", brackets)), default=0)

"""Reading stdin without blocking the event loop or holding the process open at exit."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import BinaryIO


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


async def read_lines(chunks: StdinChunks, *, limit: int) -> asyncio.AsyncIterator[bytes | None]:
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

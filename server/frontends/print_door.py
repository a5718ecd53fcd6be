"""One `agentls -p` / stream-json run on a resident server: the bridge's stdin, stdout,
stderr, signals and exit code as `mux` frames on the connection."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from protocol.methods import AttachParams
from server.frontends import mux

HANG_UP = getattr(signal, "SIGHUP", signal.SIGTERM)


class ChannelOut:
    """A binary stream whose bytes become frames of one channel."""

    def __init__(self, writer: Any, channel: int):
        self._writer = writer
        self._channel = channel

    def write(self, data: bytes) -> int:
        if data:
            self._writer.write(mux.pack(self._channel, bytes(data)))
        return len(data)

    def flush(self) -> None:
        return None


class TextOut:
    """A text stream (for `print(..., file=)` and argparse) on one channel."""

    def __init__(self, writer: Any, channel: int):
        self._out = ChannelOut(writer, channel)

    def write(self, text: str) -> int:
        self._out.write(text.encode("utf-8", "replace"))
        return len(text)

    def flush(self) -> None:
        return None


class MuxRun:
    """What a print run reads and writes. `next()` is its stdin; `signals()` what the bridge
    received, then a hang-up if the connection drops before the run ends."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any):
        self._writer = writer
        self.stdout = ChannelOut(writer, mux.STDOUT)
        self.stdout_text = TextOut(writer, mux.STDOUT)
        self.stderr = TextOut(writer, mux.STDERR)
        self._stdin: asyncio.Queue[bytes] = asyncio.Queue()
        self._signals: asyncio.Queue[int] = asyncio.Queue()
        self._pump = asyncio.get_running_loop().create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        frames = mux.Unpacker()
        ended = False
        while True:
            try:
                data = await reader.read(65536)
                received = frames.feed(data)
            except (OSError, ValueError):
                break
            if not data:
                break
            for channel, payload in received:
                if channel == mux.STDIN and not ended:
                    self._stdin.put_nowait(payload)
                    ended = not payload
                elif channel == mux.SIGNAL and len(payload) == 4:
                    self._signals.put_nowait(mux.as_int(payload))
        if not ended:
            self._stdin.put_nowait(b"")
        self._signals.put_nowait(HANG_UP)

    async def next(self) -> bytes:
        return await self._stdin.get()

    async def read_all(self) -> bytes:
        chunks = []
        while chunk := await self.next():
            chunks.append(chunk)
        return b"".join(chunks)

    async def signals(self) -> AsyncIterator[int]:
        while True:
            yield await self._signals.get()

    def finish(self, code: int) -> None:
        self._writer.write(mux.pack_int(mux.EXIT, code))
        self._pump.cancel()


PrintDoor = Callable[[AttachParams, MuxRun], Awaitable[int]]
"""Runs what the connection's `-p` flags ask for; returns the exit code."""


async def serve_print(
    door: PrintDoor, params: AttachParams, reader: asyncio.StreamReader, writer: Any
) -> None:
    run = MuxRun(reader, writer)
    code = 1
    try:
        code = await door(params, run)
    finally:
        with contextlib.suppress(Exception):
            run.finish(code)

"""LSP framing from untrusted bytes: `Content-Length` headers, then a JSON body.

The reader never raises on input and never waits for good on a bad header: a header block
without `Content-Length`, a length that is too short or too long, a body that does not parse
(or is nested too deeply) each become one `BadFrame`, and reading resumes at the next header.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from server.frontends.stdio import parse_json

CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)", re.IGNORECASE)
MAX_FRAME = 64 * 1024 * 1024
LENGTH_GRACE_S = 1.0
GARBAGE_CAP = 65536


@dataclass(frozen=True)
class BadFrame:
    reason: str


async def read_frames(
    next_chunk: Callable[[], Awaitable[bytes]], *, grace: float = LENGTH_GRACE_S
) -> AsyncIterator[Any]:
    """Yield each frame's parsed JSON body, or a BadFrame."""
    buf = bytearray()
    eof = False

    async def more(timeout: float | None = None) -> None:
        nonlocal eof
        wait = next_chunk() if timeout is None else asyncio.wait_for(next_chunk(), timeout)
        chunk = await wait
        eof = not chunk
        buf.extend(chunk)

    while True:
        header_end = buf.find(b"\r\n\r\n")
        if header_end < 0:
            if eof:
                return
            await more()
            if len(buf) > GARBAGE_CAP and not CONTENT_LENGTH.search(buf):
                del buf[:-32]  # garbage without any header: keep a tail in case one starts there
            continue
        start = header_end + 4
        length = _length(buf, header_end)
        if length is None:
            del buf[:start]
            yield BadFrame("a header block without Content-Length")
            continue
        if length > MAX_FRAME:
            del buf[:start]
            yield BadFrame(f"Content-Length {length} is over the {MAX_FRAME} byte limit")
            continue
        end = start + length
        while len(buf) < end and not eof:
            try:
                await more(grace)
            except TimeoutError:
                # A Content-Length a few bytes too large on the last frame sent: if a whole
                # message came, take it rather than wait for bytes that never come.
                whole = _whole_message(buf[start:])
                if whole is not None:
                    end = start + whole
                    break
                await more()
        try:
            message = parse_json(bytes(buf[start:end]))
        except ValueError as exc:
            # Keep the body: when the length was wrong, the next frame's header is in it.
            del buf[:start]
            yield BadFrame(f"parse error: {exc}")
            continue
        del buf[:end]
        yield message


def _length(buf: bytearray, header_end: int) -> int | None:
    # The last Content-Length of the block: text before it is garbage or a bad body.
    found = list(CONTENT_LENGTH.finditer(buf, 0, header_end))
    return int(found[-1].group(1)) if found else None


def _whole_message(data: bytearray) -> int | None:
    text = bytes(data).rstrip()
    if not text.endswith(b"}"):
        return None
    try:
        parse_json(text)
    except ValueError:
        return None
    return len(text)

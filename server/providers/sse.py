"""Server-sent events read straight from an HTTP response's bytes.

The SDK-backed providers let the official SDKs make the request (auth, headers, status errors)
and read the streamed body here: a model's reply arrives as thousands of small `data:` events,
and building the SDK's typed object for each one cost more than everything else a delta goes
through. Events come in batches, one per chunk the network delivered, so a consumer pays one
`await` per read rather than one per event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

Event = tuple[str | None, str]
"""(the `event:` field or None, the `data:` lines joined with newlines)"""


class Decoder:
    """Incremental SSE parsing (the WHATWG event-stream rules that model APIs use): lines end
    with LF, CRLF or CR; `:` starts a comment; a blank line ends an event; `id` and `retry` are
    read and dropped; an event with no data is skipped."""

    def __init__(self) -> None:
        self._tail = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[Event]:
        buffer = self._tail + chunk if self._tail else chunk
        if b"\r" in buffer:
            if buffer.endswith(b"\r"):  # its LF may come in the next chunk
                buffer, self._tail = buffer[:-1], b"\r"
            else:
                self._tail = b""
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            lines = buffer.split(b"\n")
            self._tail = lines.pop() + self._tail
        else:
            lines = buffer.split(b"\n")
            self._tail = lines.pop()
        return self._lines(lines)

    def finish(self) -> list[Event]:
        """Whatever the end of the body completes (a last event without its blank line)."""
        lines = [self._tail.rstrip(b"\r")] if self._tail else []
        self._tail = b""
        return self._lines([*lines, b""])

    def _lines(self, lines: list[bytes]) -> list[Event]:
        events: list[Event] = []
        for raw in lines:
            if not raw:
                if self._data:
                    events.append((self._event, "\n".join(self._data)))
                self._event, self._data = None, []
                continue
            line = raw.decode("utf-8")
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                self._data.append(value)
            elif field == "event":
                self._event = value or None
        return events


async def batches(chunks: AsyncIterator[bytes]) -> AsyncIterator[list[Event]]:
    """The events of a streamed body, a list per network chunk (empty lists are skipped)."""
    decoder = Decoder()
    async for chunk in chunks:
        events = decoder.feed(chunk)
        if events:
            yield events
    events = decoder.finish()
    if events:
        yield events

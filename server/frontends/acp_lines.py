"""The ACP door's stdio transport: NDJSON lines checked before the SDK dispatches them.

The SDK's own reader hands any JSON value to its dispatcher, which ends the process on a line
that is valid JSON but not a JSON-RPC object. Here every line is parsed with a depth limit and
its envelope checked; a bad line gets its JSON-RPC error (id null when it has none) and
reading goes on.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from protocol import errors
from server.frontends.envelope import envelope_problem, error_reply, reply_id
from server.frontends.stdio import parse_json

MAX_LINE = 50 * 1024 * 1024
NOTIFICATIONS = frozenset(
    {
        "session/cancel",
        "session/update",
        "$/cancel_request",
        "document/didOpen",
        "document/didChange",
        "document/didClose",
        "document/didSave",
        "document/didFocus",
    }
)
TOO_LONG = object()


def check_line(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the message, None) or (None, the error reply to send)."""
    try:
        data = parse_json(line)
    except ValueError as exc:
        return None, error_reply(None, errors.PARSE_ERROR, f"parse error: {exc}")
    problem = envelope_problem(data, NOTIFICATIONS.__contains__)
    if problem:
        return None, error_reply(reply_id(data), errors.INVALID_REQUEST, problem)
    return data, None


class CheckedLines:
    """An `acp` Transport (send / receive / close) over asyncio stdio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._prompts: set[Any] = set()  # ids of `session/prompt` requests not yet answered
        self._answered = asyncio.Event()
        self._answered.set()

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()
        if "method" not in message and message.get("id") in self._prompts:
            self._prompts.discard(message.get("id"))
            if not self._prompts:
                self._answered.set()

    async def prompts_answered(self) -> None:
        """Until every `session/prompt` received has its answer written out."""
        await self._answered.wait()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._line()
            if line is None:
                return None
            if line is TOO_LONG:
                await self.send(error_reply(None, errors.PARSE_ERROR, "line over 50 MB; skipped"))
                continue
            if not line.strip():
                continue
            message, reply = check_line(line)
            if message is not None:
                if message.get("method") == "session/prompt" and "id" in message:
                    self._prompts.add(message["id"])
                    self._answered.clear()
                return message
            if reply is not None:
                await self.send(reply)

    async def close(self) -> None:
        async with self._lock:
            await self._writer.drain()

    async def _line(self) -> Any:
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                part = await self._reader.readuntil(b"\n")
                done = True
            except asyncio.LimitOverrunError as exc:
                part, done = await self._reader.readexactly(exc.consumed), False
            except asyncio.IncompleteReadError as exc:
                if not exc.partial and not parts:
                    return None
                part, done = exc.partial, True
            size += len(part)
            if size <= MAX_LINE:
                parts.append(part)
            if done:
                return b"".join(parts) if size <= MAX_LINE else TOO_LONG

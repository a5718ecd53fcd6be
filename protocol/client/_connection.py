"""JSON-RPC 2.0 over LSP framing (`Content-Length: N` + blank line + N bytes of JSON).

Bytes -> messages (`read_message`, `encode`) -> `Connection`, which matches responses to
requests by id and hands incoming requests and notifications to callbacks. Nothing here knows
agentls methods.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from protocol import errors
from protocol.client._errors import ConnectionClosed, RpcError, error_from

log = logging.getLogger(__name__)

HEADER_END = b"\r\n\r\n"
CONTENT_LENGTH = re.compile(rb"Content-Length:\s*(\d+)", re.IGNORECASE)
CANCEL_REQUEST = "$/cancelRequest"

RequestHandler = Callable[[str, Any], Awaitable[Any]]
NotificationHandler = Callable[[str, Any], None]


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream. Frames without a Content-Length or
    with a body that is not a JSON object are logged and skipped."""
    while True:
        try:
            header = await reader.readuntil(HEADER_END)
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)  # header-less garbage: drop it
            continue
        match = CONTENT_LENGTH.search(header)
        if not match:
            log.warning("skipped a frame without Content-Length: %r", header[:80])
            continue
        try:
            body = await reader.readexactly(int(match.group(1)))
        except asyncio.IncompleteReadError:
            return None
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if isinstance(message, dict):
            return message
        log.warning("skipped a frame that is not a JSON object: %r", body[:80])


class Connection:
    """One JSON-RPC peer. Call `start()` once; `wait_closed()` returns when the stream ends."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
    ):
        self._reader = reader
        self._writer = writer
        self._on_request = on_request
        self._on_notification = on_notification
        self._ids = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._answering: dict[int | str, asyncio.Task[None]] = {}
        self._loop: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()

    def start(self) -> None:
        self._loop = asyncio.create_task(self._read_loop())

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def send_request(self, method: str, params: Any) -> asyncio.Future[Any]:
        """Send a request now; the future resolves to its result or fails with an `RpcError`."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.closed:
            future.set_exception(ConnectionClosed(f"cannot send {method}: connection closed"))
            return future
        msg_id = next(self._ids)
        self._pending[msg_id] = future
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Any) -> Any:
        future = self.send_request(method, params)
        await self.drain()
        return await future

    async def notify(self, method: str, params: Any) -> None:
        if self.closed:
            raise ConnectionClosed(f"cannot send {method}: connection closed")
        self._send({"jsonrpc": "2.0", "method": method, "params": params})
        await self.drain()

    async def drain(self) -> None:
        try:
            await self._writer.drain()
        except ConnectionError as exc:
            raise ConnectionClosed(str(exc)) from exc

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def close_write(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()

    async def aclose(self) -> None:
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
        self.close_write()

    def _send(self, message: dict[str, Any]) -> None:
        self._writer.write(encode(message))

    async def _read_loop(self) -> None:
        try:
            while (message := await read_message(self._reader)) is not None:
                try:
                    self._dispatch(message)
                except Exception:  # one bad message must not end the connection
                    log.exception("failed to handle %r", message.get("method") or "a response")
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._shut()

    def _shut(self) -> None:
        self._closed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the server closed the connection"))
        self._pending.clear()
        for task in self._answering.values():
            task.cancel()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            self._resolve(message)
        elif "id" in message:
            msg_id = message["id"]
            task = asyncio.create_task(self._answer(msg_id, method, message.get("params")))
            self._answering[msg_id] = task
            task.add_done_callback(lambda _: self._answering.pop(msg_id, None))
        elif method == CANCEL_REQUEST:
            request_id = (message.get("params") or {}).get("id")
            answering = self._answering.get(request_id) if request_id is not None else None
            if answering is not None:
                answering.cancel()  # the server stopped waiting: no answer is expected
        else:
            self._on_notification(method, message.get("params"))

    def _resolve(self, message: dict[str, Any]) -> None:
        msg_id = message.get("id")
        future = self._pending.pop(msg_id, None) if msg_id is not None else None
        if future is None or future.done():
            log.warning("a response to no pending request: %r", msg_id)
        elif "error" in message:
            future.set_exception(error_from(message["error"]))
        else:
            future.set_result(message.get("result"))

    async def _answer(self, msg_id: int | str, method: str, params: Any) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        try:
            reply["result"] = await self._on_request(method, params)
        except RpcError as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        except Exception as exc:
            log.exception("failed to answer %s", method)
            reply["error"] = {"code": errors.INTERNAL_ERROR, "message": str(exc)}
        if not self.closed:
            self._send(reply)
            try:
                await self.drain()
            except ConnectionClosed:
                pass

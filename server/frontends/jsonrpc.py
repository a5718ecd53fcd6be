"""The native front door: JSON-RPC 2.0 with LSP framing over stdio, on pygls.

Layers: bytes -> frames (`lsp_frames.read_frames`, which resyncs after garbage or a wrong
Content-Length) -> JSON-RPC envelope checks (here) -> one dispatch path built from
`protocol.methods.METHODS` (`jsonrpc_handlers`) -> the session service, which talks back through
`jsonrpc_channel`. `jsonrpc_bridge` adapts pygls; `jsonrpc_transport` writes the bytes. Params
reach handlers as plain dicts and are validated by pydantic; results go out by alias.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO, cast

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from protocol import errors
from protocol.methods import METHODS
from server import __version__
from server.frontends.envelope import envelope_problem, error_reply, reply_id
from server.frontends.jsonrpc_bridge import AgentlsServerProtocol, make_converter
from server.frontends.jsonrpc_channel import JsonRpcChannel
from server.frontends.jsonrpc_handlers import Handlers, bind, handler_name
from server.frontends.jsonrpc_transport import CoalescingWriter, is_notification
from server.frontends.lsp_frames import BadFrame, read_frames
from server.frontends.stdio import StdinChunks, cancel_on_signals
from server.sessions.service import SessionService

log = logging.getLogger(__name__)

SHUTDOWN_WAIT_S = 30.0


class AgentlsServer(LanguageServer):
    def __init__(self, service_factory: Callable[[JsonRpcChannel], SessionService]):
        super().__init__(
            "agentls",
            __version__,
            protocol_cls=AgentlsServerProtocol,
            converter_factory=make_converter,
        )
        protocol = cast(AgentlsServerProtocol, self.protocol)  # pygls types it as its base class
        self.channel = JsonRpcChannel(protocol)
        self.service = service_factory(self.channel)
        self._prompt_ids: dict[Any, str] = {}
        self._prompts: set[asyncio.Task] = set()
        self._background: set[asyncio.Task] = set()
        self.shutting_down = False
        protocol.on_cancel_request = self._cancel_prompt
        protocol.sandbox_status = self.service.sandbox_status
        handlers = Handlers(self.service)
        for method in METHODS:
            if method.direction == "client_to_server":
                impl = getattr(handlers, handler_name(method))
                if method.name == "session/prompt":
                    impl = self._tracked(impl)
                self.protocol.fm.features[method.name] = bind(method, impl)

    def _tracked(self, impl):
        async def prompt(p):
            msg_id = self.protocol.msg_id
            self._prompt_ids[msg_id] = p.session_id
            task = asyncio.current_task()
            if task is not None:
                self._prompts.add(task)
            try:
                return await impl(p)
            finally:
                self._prompt_ids.pop(msg_id, None)
                self._prompts.discard(task)

        return prompt

    def _cancel_prompt(self, msg_id: Any) -> bool:
        session_id = self._prompt_ids.get(msg_id)
        if session_id is None:
            return False
        self.service.cancel(session_id)
        return True

    async def shutdown_after_turns(self, msg_id: Any) -> None:
        """LSP `shutdown`: running turns end `aborted` and their `session/prompt` requests get
        their normal responses first; then `shutdown` answers. Requests after it get -32600."""
        self.shutting_down = True
        for session_id in list(self.service.sessions):
            self.service.cancel(session_id)
        if self._prompts:
            await asyncio.wait(set(self._prompts), timeout=SHUTDOWN_WAIT_S)
        await asyncio.sleep(0)  # the prompts' responses are written by their done callbacks
        self.protocol._shutdown = True
        self.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "result": None})

    def report_server_error(self, error: Exception, source: Any) -> None:
        log.warning("server error (%s): %s", getattr(source, "__name__", source), error)

    # -- the message loop ------------------------------------------------------------------

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        self.protocol._send_data(error_reply(msg_id, code, message))

    def handle_frame(self, data: Any) -> None:
        if isinstance(data, BadFrame):
            self.send_error(None, errors.PARSE_ERROR, data.reason)
            return
        problem = envelope_problem(data, is_notification)
        msg_id = reply_id(data)
        if problem:
            self.send_error(msg_id, errors.INVALID_REQUEST, problem)
            return
        is_request = "id" in data and "method" in data
        method = data.get("method")
        if self.shutting_down and method is not None and method != lsp.EXIT:
            if is_request:
                self.send_error(msg_id, errors.INVALID_REQUEST, "the server is shutting down")
            return
        if is_request and method == lsp.SHUTDOWN:
            task = asyncio.get_running_loop().create_task(self.shutdown_after_turns(msg_id))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return
        if "method" in data:
            data.setdefault("params", None)
        try:
            message = self.protocol.structure_message(data)
        except JsonRpcException as exc:
            if is_request:
                self.send_error(msg_id, exc.code, exc.message or "invalid params")
            return
        except Exception as exc:  # cattrs and friends on shapes nobody anticipated
            log.warning("unusable message: %s", exc)
            if is_request:
                self.send_error(msg_id, errors.INVALID_REQUEST, "unusable message")
            return
        self.protocol.handle_message(message)

    async def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self.protocol.set_writer(CoalescingWriter(stdout))
        await self.serve_frames(read_frames(StdinChunks(stdin).next))

    async def serve_frames(self, frames: AsyncIterator[Any]) -> None:
        """Handle every frame until the input ends (or `exit` raises SystemExit), then close
        the sessions. The writer is set by the caller."""
        try:
            async for frame in frames:
                try:
                    self.handle_frame(frame)
                except SystemExit:
                    raise
                except Exception:
                    log.exception("failed to handle a frame")
        finally:
            await self.service.close_all()


def run_stdio(service_factory: Callable[[JsonRpcChannel], SessionService]) -> int:
    server = AgentlsServer(service_factory)
    received: list[int] = []

    async def main() -> None:
        cancel_on_signals(asyncio.current_task(), received)
        await server.serve(sys.stdin.buffer, sys.stdout.buffer)

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        if not received:
            raise
    except SystemExit as exc:
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        log.warning("the client went away")
        return 0
    return 128 + received[0] if received else 0

"""The native front door: JSON-RPC 2.0 with LSP framing over stdio, on pygls.

Layers: bytes -> frames (`read_frames`, which resyncs after garbage or a wrong Content-Length)
-> JSON-RPC envelope checks -> one dispatch path built from `protocol.methods.METHODS` ->
the session service. Params reach handlers as plain dicts and are validated by pydantic;
results go out by alias.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, BinaryIO

import attrs
from lsprotocol import types as lsp
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

from protocol import errors
from protocol.base import WireModel
from protocol.methods import (
    BY_NAME,
    METHODS,
    PROTOCOL_VERSION,
    AskQuestionParams,
    AskQuestionResult,
    Empty,
    EnginesListResult,
    Method,
    ModelsListResult,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionUpdateParams,
    SteerResult,
)
from server import __version__
from server.engines.registry import ENGINE_IDS, engine_infos
from server.frontends.envelope import envelope_problem, error_reply, reply_id
from server.frontends.lsp_frames import BadFrame, read_frames
from server.frontends.stdio import StdinChunks
from server.providers.registry import PROVIDERS
from server.sessions.model import ClientCapabilities
from server.sessions.service import ServiceError, SessionService

log = logging.getLogger(__name__)

SHUTDOWN_WAIT_S = 30.0



# -- wire messages that keep params and results as plain dicts -------------------------------


@attrs.define
class RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponse:
    id: int | str
    jsonrpc: str
    result: Any = None


def make_converter():
    converter = default_converter()
    for cls in (RawRequest, RawNotification, RawResponse):
        fields = [f.name for f in attrs.fields(cls)]
        converter.register_structure_hook(
            cls, lambda obj, c, fields=fields: c(**{k: obj[k] for k in fields if k in obj})
        )
    return converter


class AgentlsProtocol(LanguageServerProtocol):
    """LSP lifecycle from pygls, agentls methods as raw dicts (server and client side)."""

    client_agentls: dict[str, Any] = {}
    on_cancel_request: Callable[[Any], bool] | None = None

    def get_message_type(self, method: str):
        if method in BY_NAME:
            return RawNotification if BY_NAME[method].is_notification else RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str):
        if method in BY_NAME:
            return RawResponse
        return super().get_result_type(method)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        result = yield from super().lsp_initialize(params)
        experimental = params.capabilities.experimental
        if isinstance(experimental, dict) and isinstance(experimental.get("agentls"), dict):
            self.client_agentls = experimental["agentls"]
        result.capabilities.experimental = {"agentls": server_capabilities()}
        return result

    def _handle_cancel_notification(self, msg_id):
        # A cancelled session/prompt must end with an `aborted` terminal, not a dropped future.
        if self.on_cancel_request and self.on_cancel_request(msg_id):
            return
        super()._handle_cancel_notification(msg_id)


def server_capabilities() -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "version": __version__,
        "engines": list(ENGINE_IDS),
        "providers": sorted(PROVIDERS),
        "features": ["steer", "images", "permissions", "questions", "mcp"],
    }


# -- output -----------------------------------------------------------------------------------


class CoalescingWriter:
    """Frames written in one event-loop iteration reach stdout in one write (and one flush):
    a burst of events costs one system call, and no frame waits beyond the current iteration."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:
                self._pending.append(data)
                self.flush()
                return
        self._pending.append(data)

    def flush(self) -> None:
        if self._pending:
            data, self._pending = b"".join(self._pending), []
            self._stream.write(data)
            self._stream.flush()

    def close(self) -> None:
        self.flush()
        self._stream.close()


# -- the channel the session service talks through --------------------------------------------


class JsonRpcChannel:
    def __init__(self, protocol: AgentlsProtocol):
        self.protocol = protocol

    @property
    def capabilities(self) -> ClientCapabilities:
        caps = self.protocol.client_agentls
        return ClientCapabilities(
            questions=bool(caps.get("questions")),
            permissions=bool(caps.get("permissions")),
            images=bool(caps.get("images")),
            diffs=bool(caps.get("diffs")),
        )

    def send_update(self, params: SessionUpdateParams) -> None:
        # A plain dict skips the attrs/cattrs round trip pygls would make for every event.
        self.protocol._send_data(
            {"jsonrpc": "2.0", "method": "session/update", "params": params.to_wire()}
        )

    async def request_permission(self, params: RequestPermissionParams) -> RequestPermissionResult:
        raw = await self._request("session/request_permission", params)
        try:
            return RequestPermissionResult.model_validate(raw)
        except ValidationError:
            log.warning("malformed permission answer %r; treated as cancelled", raw)
            return RequestPermissionResult.model_validate({"outcome": {"outcome": "cancelled"}})

    async def ask_question(self, params: AskQuestionParams) -> AskQuestionResult:
        raw = await self._request("session/ask_question", params)
        try:
            return AskQuestionResult.model_validate(raw)
        except ValidationError:
            log.warning("malformed question answer %r; treated as declined", raw)
            return AskQuestionResult(declined=True)

    async def _request(self, method: str, params: WireModel) -> Any:
        msg_id = f"agentls-{uuid.uuid4().hex[:12]}"
        future = self.protocol.send_request(method, params.to_wire(), msg_id=msg_id)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self.protocol._request_futures.pop(msg_id, None)
            self.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise


# -- dispatch ---------------------------------------------------------------------------------


class Handlers:
    """One coroutine per client->server method, named after it (`session/new` -> session_new)."""

    def __init__(self, service: SessionService):
        self.service = service

    async def session_new(self, p):
        info = await self.service.new_session(p)
        await self._attach_mcp(info.session_id, p.mcp_servers)
        return info

    async def _attach_mcp(self, session_id: str, configs: dict[str, Any] | None) -> None:
        if configs:
            from server.sessions.mcp import attach_servers

            servers = {name: c.to_wire() for name, c in configs.items()}
            await attach_servers(self.service, session_id, servers)

    async def session_prompt(self, p):
        return await self.service.prompt(p)

    async def session_cancel(self, p):
        self.service.cancel(p.session_id)

    async def session_steer(self, p):
        text = "\n".join(getattr(b, "text", "") for b in p.prompt)
        self.service.steer(p.session_id, text)
        return SteerResult(queued=True)

    async def session_set_model(self, p):
        self.service.set_model(p.session_id, p.model_id)
        return Empty()

    async def session_set_mode(self, p):
        self.service.set_mode(p.session_id, p.mode_id)
        return Empty()

    async def session_close(self, p):
        await self.service.close(p.session_id)
        return Empty()

    async def session_load(self, p):
        info = await self.service.load(p.session_id)
        await self._attach_mcp(p.session_id, p.mcp_servers)
        return info

    async def session_list(self, p):
        return await self.service.list(p.cwd, p.cursor, p.limit or 50)

    async def session_search(self, p):
        return await self.service.search(p.query, p.limit or 20)

    async def models_list(self, p):
        from server.providers.catalog import models_for

        return ModelsListResult(models=models_for(p.provider))

    async def engines_list(self, p):
        return EnginesListResult(engines=engine_infos(self.service.engines))

    async def skills_list(self, p):
        from server.skills import list_skills

        session = self.service.get(p.session_id) if p.session_id else None
        cwd = session.cwd if session else Path(p.cwd)
        return list_skills(cwd, self.service.offer(session.id).skills if session else None)

    async def subagents_list(self, p):
        from server.agent.profiles import list_subagents

        session = self.service.get(p.session_id) if p.session_id else None
        cwd = session.cwd if session else Path(p.cwd)
        return list_subagents(cwd, self.service.offer(session.id).profiles if session else None)

    async def mcp_list(self, p):
        from server.sessions.mcp import mcp_list

        return await mcp_list(self.service, p)


def handler_name(method: Method) -> str:
    return method.name.replace("/", "_")


def invalid_params(exc: ValidationError) -> JsonRpcException:
    problems = [
        {"path": ".".join(str(p) for p in e["loc"]), "message": e["msg"], "type": e["type"]}
        for e in exc.errors()
    ]
    summary = "; ".join(f"{p['path'] or '(params)'}: {p['message']}" for p in problems)
    return JsonRpcException(f"invalid params: {summary}", errors.INVALID_PARAMS, problems)


def bind(method: Method, impl: Callable[[Any], Awaitable[Any]]):
    async def handle(params: Any) -> Any:
        try:
            parsed = method.params.model_validate(params if params is not None else {})
        except ValidationError as exc:
            raise invalid_params(exc) from None
        try:
            result = await impl(parsed)
        except ServiceError as exc:
            raise JsonRpcException(str(exc), exc.code) from None
        return result.to_wire() if isinstance(result, WireModel) else result

    return handle


class AgentlsServer(LanguageServer):
    def __init__(self, service_factory: Callable[[JsonRpcChannel], SessionService]):
        super().__init__(
            "agentls", __version__, protocol_cls=AgentlsProtocol, converter_factory=make_converter
        )
        self.channel = JsonRpcChannel(self.protocol)
        self.service = service_factory(self.channel)
        self._prompt_ids: dict[Any, str] = {}
        self._prompts: set[asyncio.Task] = set()
        self._background: set[asyncio.Task] = set()
        self.shutting_down = False
        self.protocol.on_cancel_request = self._cancel_prompt
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

    async def shutdown(self, msg_id: Any) -> None:
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
            task = asyncio.get_running_loop().create_task(self.shutdown(msg_id))
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
        chunks = StdinChunks(stdin)
        try:
            async for frame in read_frames(chunks.next):
                try:
                    self.handle_frame(frame)
                except SystemExit:
                    raise
                except Exception:
                    log.exception("failed to handle a frame")
        finally:
            await self.service.close_all()


def is_notification(method: str) -> bool:
    if method in BY_NAME:
        return BY_NAME[method].is_notification
    types = lsp.METHOD_TO_TYPES.get(method)
    return types is not None and types[1] is None


def run_stdio(service_factory: Callable[[JsonRpcChannel], SessionService]) -> int:
    server = AgentlsServer(service_factory)
    try:
        asyncio.run(server.serve(sys.stdin.buffer, sys.stdout.buffer))
    except SystemExit as exc:
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        log.warning("the client went away")
        return 0
    return 0

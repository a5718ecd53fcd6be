"""The client: spawn or connect, initialize, sessions, catalogues, answering the server."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protocol import errors
from protocol.base import WireModel
from protocol.client._connection import Connection
from protocol.client._errors import ConnectionClosed, ProtocolVersionError, RpcError
from protocol.client._handlers import PermissionHandler, QuestionHandler, decline, reject
from protocol.client._session import Session
from protocol.client._turn import parse_update
from protocol.methods import (
    BY_NAME,
    PROTOCOL_VERSION,
    AskQuestionParams,
    EnginesListResult,
    ListSessionsResult,
    ModelsListResult,
    NewSessionParams,
    PermissionMode,
    RequestPermissionParams,
    SearchSessionsResult,
    SessionInfoResult,
)

log = logging.getLogger(__name__)

DEFAULT_CAPABILITIES = {"permissions": True, "questions": True, "images": True, "diffs": True}
STREAM_LIMIT = 64 * 1024 * 1024


def own_process_group() -> dict[str, Any]:
    """Popen options that keep a terminal's Ctrl-C away from the server: the client decides
    what Ctrl-C means (usually: cancel the turn) and ends the server itself."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def default_command() -> list[str]:
    """`agentls serve` run by this interpreter, which can import the package this module is in."""
    return [sys.executable, "-m", "server.cli", "serve"]


class Client:
    """A connection to one `agentls serve`. Build it with `await Client.spawn()` or
    `await Client.connect(reader, writer)`; both return it initialized. Use it as an async
    context manager, or call `close()`.

    `on_permission` answers `session/request_permission` (default `reject`), `on_question`
    answers `session/ask_question` (default `decline`); a session may override both.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        process: asyncio.subprocess.Process | None = None,
        on_permission: PermissionHandler = reject,
        on_question: QuestionHandler = decline,
    ):
        self.connection = Connection(
            reader, writer, on_request=self._on_request, on_notification=self._on_notification
        )
        self.process = process
        self.on_permission = on_permission
        self.on_question = on_question
        self.sessions: dict[str, Session] = {}
        self.server_info: dict[str, Any] = {}
        """The `initialize` result's `capabilities.experimental.agentls`."""

    # -- construction and lifecycle ------------------------------------------------------------

    @classmethod
    async def spawn(
        cls,
        *,
        command: Sequence[str] | None = None,
        args: Sequence[str] = (),
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        stderr: int | None = subprocess.DEVNULL,
        capabilities: Mapping[str, Any] | None = None,
        on_permission: PermissionHandler = reject,
        on_question: QuestionHandler = decline,
    ) -> Client:
        """Start `agentls serve` (or `command`, plus `args`) and initialize it. The server's
        stderr is discarded unless `stderr` says otherwise; its log file is in the data dir."""
        argv = [*(command or default_command()), *args]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            limit=STREAM_LIMIT,
            **own_process_group(),
        )
        assert process.stdout is not None and process.stdin is not None
        client = cls(
            process.stdout,
            process.stdin,
            process=process,
            on_permission=on_permission,
            on_question=on_question,
        )
        try:
            await client.initialize(capabilities=capabilities)
        except BaseException:
            await client.close()
            raise
        return client

    @classmethod
    async def connect(
        cls,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        capabilities: Mapping[str, Any] | None = None,
        on_permission: PermissionHandler = reject,
        on_question: QuestionHandler = decline,
    ) -> Client:
        """Talk to a server that is already running, over `reader` / `writer`."""
        client = cls(reader, writer, on_permission=on_permission, on_question=on_question)
        try:
            await client.initialize(capabilities=capabilities)
        except BaseException:
            await client.connection.aclose()
            raise
        return client

    async def initialize(self, *, capabilities: Mapping[str, Any] | None = None) -> None:
        self.connection.start()
        caps = dict(DEFAULT_CAPABILITIES if capabilities is None else capabilities)
        params = {
            "processId": os.getpid(),
            "clientInfo": {"name": "agentls-python-client"},
            "capabilities": {"experimental": {"agentls": caps}},
        }
        result = await self.connection.request("initialize", params)
        experimental = (result or {}).get("capabilities", {}).get("experimental") or {}
        self.server_info = experimental.get("agentls") or {}
        version = self.server_info.get("protocolVersion")
        if version != PROTOCOL_VERSION:
            raise ProtocolVersionError(
                f"server speaks protocol version {version}, this client {PROTOCOL_VERSION}"
            )
        await self.connection.notify("initialized", {})

    def supports(self, feature: str) -> bool:
        """Whether the server lists `feature` (e.g. "steer") in its capabilities."""
        return feature in self.server_info.get("features", [])

    async def close(self, *, timeout: float = 5.0) -> None:
        """`shutdown` and `exit`, then wait for the process (killed after `timeout`)."""
        if not self.connection.closed:
            try:
                await asyncio.wait_for(self.connection.request("shutdown", None), timeout)
                await self.connection.notify("exit", None)
            except (TimeoutError, ConnectionClosed, RpcError):
                pass
        # End of input lets the server's stdin reader finish before the interpreter exits.
        self.connection.close_write()
        if self.process is not None:
            await self._reap(timeout)
        await self.connection.aclose()

    async def _reap(self, timeout: float) -> None:
        assert self.process is not None
        try:
            await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests ------------------------------------------------------------------------------

    async def call(self, method: str, params: WireModel | Mapping[str, Any] | None = None) -> Any:
        """Any client->server method of the table. Dict params go out as given (the server
        validates them); the result comes back as the method's result model (None for a
        notification)."""
        spec = BY_NAME.get(method)
        if spec is None or spec.direction != "client_to_server":
            raise ValueError(f"{method!r} is not a client->server method of the protocol")
        wire = params.to_wire() if isinstance(params, WireModel) else dict(params or {})
        if spec.result is None:
            await self.connection.notify(method, wire)
            return None
        return spec.result.model_validate(await self.connection.request(method, wire))

    async def new_session(
        self,
        cwd: str | Path,
        *,
        engine: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        mode: PermissionMode | None = None,
        subagent: str | None = None,
        on_permission: PermissionHandler | None = None,
        on_question: QuestionHandler | None = None,
    ) -> Session:
        """Create a session working in `cwd` (made absolute here)."""
        params = NewSessionParams(
            cwd=str(Path(cwd).resolve()),
            engine=engine,
            provider=provider,
            model=model,
            mode=mode,
            subagent=subagent,
        )
        info: SessionInfoResult = await self.call("session/new", params)
        session = Session(
            self, info.session_id, on_permission=on_permission, on_question=on_question
        )
        session.info = info
        self.sessions[session.id] = session
        return session

    async def load_session(
        self,
        session_id: str,
        *,
        on_permission: PermissionHandler | None = None,
        on_question: QuestionHandler | None = None,
    ) -> Session:
        """Reopen a stored session; the replayed history lands in `session.history`."""
        session = Session(self, session_id, on_permission=on_permission, on_question=on_question)
        self.sessions[session_id] = session
        session.loading = True
        try:
            session.info = await self.call("session/load", {"sessionId": session_id})
        except BaseException:
            self.sessions.pop(session_id, None)
            raise
        finally:
            session.loading = False
        return session

    async def list_sessions(
        self, *, cwd: str | None = None, cursor: str | None = None, limit: int | None = None
    ) -> ListSessionsResult:
        params = {"cwd": cwd, "cursor": cursor, "limit": limit}
        return await self.call("session/list", {k: v for k, v in params.items() if v is not None})

    async def search_sessions(
        self, query: str, *, limit: int | None = None
    ) -> SearchSessionsResult:
        params = {"query": query} | ({"limit": limit} if limit is not None else {})
        return await self.call("session/search", params)

    async def models(self, *, provider: str | None = None) -> ModelsListResult:
        return await self.call("models/list", {"provider": provider} if provider else {})

    async def engines(self) -> EnginesListResult:
        return await self.call("engines/list", {})

    # -- what the server sends -----------------------------------------------------------------

    def _on_notification(self, method: str, params: Any) -> None:
        if method != "session/update" or not isinstance(params, dict):
            return  # other notifications (LSP logging, newer methods) are not for this client
        session = self.sessions.get(params.get("sessionId", ""))
        if session is None:
            return
        update = parse_update(params.get("update"))
        session.deliver(str(params.get("turnId", "")), int(params.get("seq", 0)), update)

    async def _on_request(self, method: str, params: Any) -> Any:
        if method == "session/request_permission":
            request = RequestPermissionParams.model_validate(params)
            session = self.sessions.get(request.session_id)
            handler = (session and session.on_permission) or self.on_permission
            return await self._ask(handler, request, reject)
        if method == "session/ask_question":
            question = AskQuestionParams.model_validate(params)
            session = self.sessions.get(question.session_id)
            on_question = (session and session.on_question) or self.on_question
            return await self._ask(on_question, question, decline)
        raise RpcError(f"method not found: {method}", code=errors.METHOD_NOT_FOUND)

    async def _ask(self, handler: Any, request: WireModel, fallback: Any) -> dict[str, Any]:
        """The handler's answer; a failing handler is logged and answered with `fallback`, so
        the turn is never left waiting."""
        try:
            answer = handler(request)
            if inspect.isawaitable(answer):
                answer = await answer
            return answer.to_wire()
        except Exception:
            log.exception(
                "the %s handler failed; answering %s", type(request).__name__, fallback.__name__
            )
            return fallback(request).to_wire()

"""One connection to an MCP server, on the official `mcp` SDK.

The SDK's transports and `ClientSession` are context managers whose task groups must be entered
and left by one task, while tool calls come from turn tasks and the end from `session/close`.
So each connection lives in a task of its own (`_serve`): it connects, initializes and lists the
tools within the startup timeout, then holds the connection until `stop()` or until the server
goes away. Calls are requests on the shared `ClientSession` from whichever task makes them;
cancelling the caller makes the SDK send `notifications/cancelled`. Stopping a stdio server
closes its stdin, then kills its process group (the SDK starts it in a new session; on Windows
a job object).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TextIO, cast

import anyio
import httpx2
import mcp_types as types
from anyio.abc import ObjectReceiveStream
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pydantic import FileUrl

from protocol.methods import SandboxMode
from server import __version__
from server.mcp.config import ServerConfig
from server.mcp.sdk import sdk_streams
from server.tools.sandbox import Sandbox, SandboxSettings, probe
from server.tools.spawn import marked

log = logging.getLogger(__name__)

Status = Literal["starting", "connected", "failed", "stopped"]

CLIENT_INFO = types.Implementation(name="agentls", version=__version__)
STOP_TIMEOUT = 10.0
MAX_TOOL_PAGES = 50
STDERR_TAIL = 600


class McpConnection:
    """An MCP server as the sessions that use it see it: status, tools, calls."""

    def __init__(self, config: ServerConfig, *, root: Path, log_dir: Path | None = None):
        self.config = config
        self.root = root
        self.status: Status = "starting"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.server_info: types.Implementation | None = None
        self.refs = 0
        self.listeners: list[Callable[[McpConnection], None]] = []
        self._log_dir = log_dir
        self._log_start = 0
        self._session: ClientSession | None = None
        self._ready = asyncio.Event()
        self._down = asyncio.Event()
        self._wake = asyncio.Event()
        self._stopping = False
        self._scope = anyio.CancelScope()
        self._task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def start(self) -> None:
        # A fresh context: the request that happens to start a shared server must not lend it
        # its context variables (trace target, tool call id).
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._serve(), context=contextvars.Context())

    async def ready(self) -> None:
        """Wait until the server is connected or has failed (bounded by the startup timeout)."""
        await self._ready.wait()

    async def settled(self, timeout: float) -> None:
        """Wait (at most `timeout`) until the connection is known to be down."""
        with anyio.move_on_after(timeout):
            await self._down.wait()

    async def call(
        self, tool: str, arguments: dict[str, Any], *, timeout: float
    ) -> types.CallToolResult:
        session = self._session
        if session is None or self.status != "connected":
            raise ConnectionError(self.unavailable())
        return await session.call_tool(tool, arguments, read_timeout_seconds=timeout)

    def unavailable(self) -> str:
        why = f": {self.error}" if self.error else ""
        return f"MCP server {self.name!r} is not running ({self.status}{why})"

    async def stop(self) -> None:
        """Close the connection and end the server; returns when it is gone."""
        self._stopping = True
        if self._task is None:
            return
        if self.status == "starting":
            self._scope.cancel()
        self._wake.set()
        done, _ = await asyncio.wait({self._task}, timeout=STOP_TIMEOUT)
        if not done:
            log.warning("MCP server %s did not stop in time; cancelling its task", self.name)
            self._scope.cancel()
            await asyncio.wait({self._task}, timeout=STOP_TIMEOUT)

    # -- the connection's own task ---------------------------------------------------------

    async def _serve(self) -> None:
        errlog = self._open_log()
        try:
            with self._scope:
                await self._connect(errlog)
        except Exception as exc:
            if not self._stopping:
                self._set("failed", self._explain(exc))
        finally:
            self._session = None
            if self.status in ("starting", "connected"):
                self._set("stopped")
            self._ready.set()
            errlog.close()

    async def _connect(self, errlog: TextIO) -> None:
        async with self._transport(errlog) as (read, write):
            read = EofWatch(read, self._wake.set)
            async with ClientSession(
                read, write, client_info=CLIENT_INFO, list_roots_callback=self._roots
            ) as session:
                with anyio.fail_after(self.config.startup_timeout):
                    init = await session.initialize()
                    tools = await list_tools(session) if init.capabilities.tools else []
                self._session, self.server_info, self.tools = session, init.server_info, tools
                self._set("connected")
                self._ready.set()
                await self._wake.wait()
                self._session = None
                if not self._stopping:
                    self._set("failed", "the server closed the connection" + self._stderr())

    @asynccontextmanager
    async def _transport(self, errlog: TextIO) -> AsyncIterator[Any]:
        config = self.config
        if config.bridge is not None:
            async with sdk_streams(config.bridge) as streams:
                yield streams
            return
        if config.transport == "http":
            # The SDK's defaults, with room for tools that answer slowly on a quiet stream.
            timeout = httpx2.Timeout(30.0, read=max(300.0, config.tool_timeout))
            client = httpx2.AsyncClient(headers=config.headers, timeout=timeout)
            async with client, streamable_http_client(config.url, http_client=client) as streams:
                yield streams
            return
        argv, env = [config.command, *config.args], marked(config.env or {})
        sandbox = None
        if config.sandbox is not None:
            mode, network = config.sandbox
            settings = SandboxSettings(mode=cast(SandboxMode, mode), network=network)
            sandbox = Sandbox(settings, self.root, probe())
            if not sandbox.active:
                raise SandboxUnavailable(
                    f"the server asks for a sandbox and none can be made: {sandbox.missing}"
                )
            argv = sandbox.wrap(argv, cwd=Path(config.cwd or self.root))
            env = sandbox.environment(env)
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=env, cwd=config.cwd or None
        )
        try:
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams
        finally:
            if sandbox is not None:
                sandbox.close()

    async def _roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(self.root.as_uri()), name="workspace")])

    def _set(self, status: Status, error: str | None = None) -> None:
        if status == self.status and error == self.error:
            return
        self.status, self.error = status, error
        if status in ("failed", "stopped"):
            self._down.set()
        if error:
            log.warning("MCP server %s %s: %s", self.name, status, error)
        for listener in list(self.listeners):
            try:
                listener(self)
            except Exception:
                log.exception("an MCP status listener failed")

    # -- the server's stderr, kept for error messages ------------------------------------

    def _open_log(self) -> TextIO:
        if self._log_dir is not None and self.config.transport == "stdio":
            try:
                self._log_dir.mkdir(parents=True, exist_ok=True)
                path = self._log_dir / f"mcp-{safe_file_name(self.name)}.log"
                handle = path.open("a", encoding="utf-8", errors="replace")
                self._log_start = handle.tell()
                return handle
            except OSError as exc:
                log.debug("no stderr log for MCP server %s: %s", self.name, exc)
        return open(os.devnull, "w", encoding="utf-8")

    def _stderr(self) -> str:
        if self._log_dir is None or self.config.transport != "stdio":
            return ""
        path = self._log_dir / f"mcp-{safe_file_name(self.name)}.log"
        try:
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                handle.seek(self._log_start)
                text = handle.read().strip()
        except OSError:
            return ""
        return f"; its stderr ends: {text[-STDERR_TAIL:]}" if text else ""

    def _explain(self, exc: BaseException) -> str:
        leaf = first_leaf(exc)
        if isinstance(leaf, TimeoutError) and self.status == "starting":
            text = f"did not start within {self.config.startup_timeout:g} s"
        elif isinstance(leaf, FileNotFoundError) and self.config.transport == "stdio":
            text = f"command not found: {self.config.command}"
        elif isinstance(leaf, SandboxUnavailable):
            return str(leaf)
        else:
            text = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        return text + self._stderr()


class SandboxUnavailable(RuntimeError):
    pass


class EofWatch(ObjectReceiveStream[Any]):
    """A transport's read stream that reports its end (the server went away)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]):
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def safe_file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)

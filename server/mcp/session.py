"""The MCP servers of one session: joined from the pool, their tools, their status reports.

Status changes happen outside turns (a server fails to start at `session/new`, crashes while
the user reads), but events belong to a turn. So changes queue up as `mcp_status` notes and go
out at the start of the next turn, or right away when an MCP tool call of a running turn ends.

A server that crashes is started again by the next call to one of its tools (the call that was
running when it crashed is reported failed, never repeated: it may have had effects), at most
`MAX_RESTARTS` times per session.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio

from protocol.methods import McpImplementation, McpServerInfo, McpToolInfo
from protocol.updates import McpStatus
from server.mcp.config import ServerConfig
from server.mcp.connection import McpConnection
from server.mcp.pool import McpPool
from server.mcp.tools import McpTool, server_prefix
from server.tools.base import ToolContext

log = logging.getLogger(__name__)

MAX_RESTARTS = 3


class McpSessionServers:
    """The servers a session uses and the tools they give it."""

    def __init__(self, pool: McpPool, root: Path):
        self.pool = pool
        self.root = root
        self.configs: dict[str, ServerConfig] = {}
        self.connections: dict[str, McpConnection] = {}
        self.tools: dict[str, McpTool] = {}
        self.notes: list[McpStatus] = []
        self.restarts: Counter[str] = Counter()
        self._reviving: dict[str, asyncio.Lock] = {}
        self._closed = False

    async def start(
        self,
        configs: Iterable[ServerConfig],
        *,
        keep: Callable[[McpTool], bool] = lambda tool: True,
    ) -> list[McpTool]:
        """Start or join each enabled server, all at once; returns the new tools of those that
        connected, those `keep` accepts. A server already in the session under the same name
        is replaced."""
        configs = list(configs)
        for config in configs:
            await self._leave(config.name)
            self.configs[config.name] = config
        async with anyio.create_task_group() as group:
            for config in configs:
                if config.state == "enabled":
                    group.start_soon(self._join, config)
        added = [tool for config in configs for tool in self._adopt_tools(config.name, keep)]
        self.notes.extend(self.note(config.name) for config in configs)
        return added

    async def _join(self, config: ServerConfig) -> None:
        conn = await self.pool.acquire(config, self.root)
        if self._closed:
            await self.pool.release(conn)
            return
        self.connections[config.name] = conn
        conn.listeners.append(self._changed)

    def _adopt_tools(self, name: str, keep: Callable[[McpTool], bool]) -> list[McpTool]:
        conn = self.connections.get(name)
        if conn is None or conn.status != "connected":
            return []
        added = []
        for spec in conn.tools:
            tool = McpTool(conn, spec, after_call=self.report, revive=self.revive)
            if not keep(tool):
                continue
            if tool.name in self.tools:
                log.warning("MCP tool %s is offered twice; keeping the first", tool.name)
                continue
            self.tools[tool.name] = tool
            added.append(tool)
        return added

    async def revive(self, name: str) -> McpConnection:
        """The server's connection, started again when it has gone down since it connected;
        raises ConnectionError when it cannot be (closed session, restart budget spent, the
        new start failing)."""
        async with self._reviving.setdefault(name, asyncio.Lock()):
            conn = self.connections.get(name)
            if conn is not None and conn.status == "connected":
                return conn
            if self._closed or name not in self.configs:
                raise ConnectionError(f"MCP server {name!r} is not part of this session")
            if self.restarts[name] >= MAX_RESTARTS:
                why = conn.unavailable() if conn else f"MCP server {name!r} is not running"
                raise ConnectionError(
                    f"{why}; it was restarted {MAX_RESTARTS} times in this session, not again"
                )
            self.restarts[name] += 1
            log.info("restarting MCP server %s (restart %d)", name, self.restarts[name])
            await self._release(name)
            await self._join(self.configs[name])
            fresh = self.connections.get(name)
            if fresh is None:
                raise ConnectionError(f"MCP server {name!r} is not part of this session")
            self.notes.append(self.note(name))
            for tool in self.tools.values():
                if tool.conn.name == name:
                    tool.conn = fresh
            if fresh.status != "connected":
                raise ConnectionError(fresh.unavailable())
            return fresh

    async def _leave(self, name: str) -> None:
        self.tools = {n: t for n, t in self.tools.items() if t.conn.name != name}
        await self._release(name)

    async def _release(self, name: str) -> None:
        conn = self.connections.pop(name, None)
        if conn is not None:
            conn.listeners.remove(self._changed)
            await self.pool.release(conn)

    def _changed(self, conn: McpConnection) -> None:
        if self.connections.get(conn.name) is conn:
            self.notes.append(self.note(conn.name))

    # -- reporting ----------------------------------------------------------------------

    def report(self, ctx: ToolContext) -> None:
        """Send queued status notes through the running turn (after an MCP tool call)."""
        if ctx.sink is not None:
            self.flush(ctx.sink)

    def flush(self, sink: Any) -> None:
        notes, self.notes = self.notes, []
        for note in notes:
            sink.emit(note)

    def note(self, name: str) -> McpStatus:
        status, error = self.status(name)
        count = sum(1 for t in self.tools.values() if t.conn.name == name)
        return McpStatus(
            server=name, status=status, error=error, tools=count if status == "connected" else None
        )

    def status(self, name: str) -> tuple[Any, str | None]:
        conn = self.connections.get(name)
        if conn is not None:
            return conn.status, conn.error
        config = self.configs[name]
        if config.state == "enabled":
            return "failed", "could not be started"
        return ("failed" if config.state == "invalid" else config.state), config.problem

    def describe(self) -> list[McpServerInfo]:
        """Every server of the session, for `mcp/list`."""
        return [self._info(name) for name in sorted(self.configs)]

    def _info(self, name: str) -> McpServerInfo:
        config, conn = self.configs[name], self.connections.get(name)
        status, error = self.status(name)
        server = conn.server_info if conn else None
        return McpServerInfo(
            name=name,
            transport=config.transport,
            source=config.source,
            status=status,
            error=error,
            server_info=McpImplementation(name=server.name, version=server.version)
            if server
            else None,
            tools=[
                McpToolInfo(name=t.name, tool=t.remote, title=t.display, description=t.description)
                for t in self.tools.values()
                if t.conn.name == name
            ],
        )

    async def close(self) -> None:
        """Let go of every server; the pool stops those no other session uses."""
        self._closed = True
        for name in list(self.connections):
            await self._leave(name)


def covered_tools(names: Iterable[Any], tools: Iterable[McpTool]) -> set[str]:
    """The MCP tools a list of tool names covers (`permissions.allow`, `tools.disallowed`):
    `mcp__db` and `mcp__db__*` cover every tool of server `db`, `mcp__db__query` that one."""
    rules = {n.strip() for n in names if isinstance(n, str)}
    covered = set()
    for tool in tools:
        server = server_prefix(tool.conn.name)
        if rules & {tool.name, server, f"{server}__*"}:
            covered.add(tool.name)
    return covered

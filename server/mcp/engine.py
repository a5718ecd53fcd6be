"""MCP for the native engine: a session's servers start with it and stop with it.

The SDK (about a second of imports) loads only when a session has MCP servers to start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from server.agent.state import AgentSession
from server.mcp.config import session_servers

if TYPE_CHECKING:
    from server.mcp.pool import McpPool


class McpSupport:
    """The engine's side: one pool of running servers, shared by its sessions."""

    def __init__(self) -> None:
        self._pool: McpPool | None = None

    async def open(self, session: AgentSession) -> None:
        """Start the servers the session's configuration names and give it their tools."""
        config = session.spec.config
        await self._start(session, session_servers(config, session.spec.cwd))

    async def attach(self, session: AgentSession, servers: Mapping[str, Any]) -> None:
        """Start servers a client passed for this session (`session/new`, ACP, stream-json)."""
        defaults = {"mcp": session.spec.config.get("mcp") or {}}
        await self._start(session, session_servers(defaults, session.spec.cwd, client=servers))

    async def close(self, session: AgentSession) -> None:
        if session.mcp is not None:
            await session.mcp.close()

    async def dispose(self) -> None:
        if self._pool is not None:
            await self._pool.close()

    async def _start(self, session: AgentSession, configs: list[Any]) -> None:
        if not configs:
            return
        from server.mcp.session import McpSessionServers, covered_tools
        from server.mcp.tools import McpTool

        if session.mcp is None:
            session.mcp = McpSessionServers(self.pool(), session.spec.cwd)
        replaced = {c.name for c in configs}
        session.tools = {
            n: t
            for n, t in session.tools.items()
            if not (isinstance(t, McpTool) and t.conn.name in replaced)
        }
        config = session.spec.config
        disallowed = (config.get("tools") or {}).get("disallowed", [])
        profile = session.delegation.profile if session.delegation else None
        allowlist = profile.tools if profile is not None else None

        def keep(tool: McpTool) -> bool:
            if covered_tools(disallowed, [tool]):
                return False
            return allowlist is None or bool(covered_tools(allowlist, [tool]))

        tools = await session.mcp.start(configs, keep=keep)
        session.tools.update({tool.name: tool for tool in tools})
        allow = (config.get("permissions") or {}).get("allow", [])
        session.permissions.allow_rules |= covered_tools(allow, tools)

    def pool(self) -> McpPool:
        if self._pool is None:
            from server.logs import data_dir
            from server.mcp.pool import McpPool

            self._pool = McpPool(log_dir=data_dir() / "logs")
        return self._pool

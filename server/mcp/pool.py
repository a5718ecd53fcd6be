"""Running MCP servers, shared by the sessions of a project that configure one the same way."""

from __future__ import annotations

import logging
from pathlib import Path

from server.mcp.config import ServerConfig
from server.mcp.connection import McpConnection

log = logging.getLogger(__name__)


class McpPool:
    """Hands out connections by configuration and workspace; a server stops when the last
    session holding it lets go. A failed or stopped server is started afresh for the next
    session that asks."""

    def __init__(self, *, log_dir: Path | None = None):
        self._log_dir = log_dir
        self._live: dict[str, McpConnection] = {}

    async def acquire(self, config: ServerConfig, root: Path) -> McpConnection:
        """A connection that is connected or has failed (never one still starting)."""
        key = pool_key(config, root)
        conn = self._live.get(key)
        if conn is None or conn.status in ("failed", "stopped"):
            conn = McpConnection(config, root=root, log_dir=self._log_dir)
            self._live[key] = conn
            conn.start()
        conn.refs += 1
        try:
            await conn.ready()
        except BaseException:
            await self.release(conn)
            raise
        return conn

    async def release(self, conn: McpConnection) -> None:
        conn.refs -= 1
        if conn.refs > 0:
            return
        key = pool_key(conn.config, conn.root)
        if self._live.get(key) is conn:
            del self._live[key]
        await conn.stop()

    async def close(self) -> None:
        """Stop every server (engine disposal)."""
        live, self._live = list(self._live.values()), {}
        for conn in live:
            await conn.stop()

    def __len__(self) -> int:
        return len(self._live)


def pool_key(config: ServerConfig, root: Path) -> str:
    return f"{root}\n{config.key()}"

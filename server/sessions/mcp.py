"""What the front doors call: client-given servers, `mcp/list`, Claude Code's status shapes."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from protocol import errors
from protocol.methods import McpListParams, McpListResult, McpServerInfo
from protocol.updates import McpServerStatus
from server.config import ConfigError, load_config
from server.mcp.config import ServerConfig, State, session_servers
from server.sessions.errors import ServiceError

log = logging.getLogger(__name__)

# Our statuses as Claude Code's `mcp_servers` / `mcp_status` spell them.
CLAUDE_STATUS = {
    "starting": "pending",
    "connected": "connected",
    "failed": "failed",
    "stopped": "failed",
    "disabled": "disabled",
    "untrusted": "disabled",
    "configured": "pending",
}


async def attach_servers(service: Any, session_id: str, servers: Mapping[str, Any]) -> None:
    """Start the MCP servers a client passed with `session/new` (native JSON-RPC, ACP) for a
    session that exists. Engines without MCP support log them and go on without."""
    if not servers:
        return
    session = service.get(session_id)
    await session.engine.attach_mcp_servers(session.handle, dict(servers))


async def mcp_list(service: Any, params: McpListParams) -> McpListResult:
    if params.session_id:
        return McpListResult(servers=service.offer(params.session_id).mcp or [])
    cwd = Path(params.cwd or "")
    if not cwd.is_absolute() or not cwd.is_dir():
        raise ServiceError(
            errors.INVALID_PARAMS, f"cwd must be an existing absolute directory: {cwd}"
        )
    try:
        config = load_config(cwd, flags=service.flags, environ=service.environ)
    except ConfigError as exc:
        raise ServiceError(errors.INVALID_PARAMS, str(exc)) from exc
    return McpListResult(servers=configured(session_servers(config, cwd)))


def configured(configs: list[ServerConfig]) -> list[McpServerInfo]:
    """Servers as configured for a workspace without a session (nothing is started)."""
    return [
        McpServerInfo(
            name=c.name,
            transport=c.transport,
            source=c.source,
            status=listed_status(c.state),
            error=c.problem,
        )
        for c in configs
    ]


def claude_statuses(infos: list[McpServerInfo], *, detailed: bool = False) -> list[dict[str, Any]]:
    """The session's servers for stream-json: `system/init` (`detailed=False`) and the
    `mcp_status` control response."""
    out = []
    for info in infos:
        entry: dict[str, Any] = {"name": info.name, "status": CLAUDE_STATUS[info.status]}
        if detailed:
            if info.server_info:
                entry["serverInfo"] = info.server_info.to_wire()
            if info.error:
                entry["error"] = info.error
            entry["scope"] = info.source
            entry["tools"] = [
                {"name": t.tool, **({"description": t.description} if t.description else {})}
                for t in info.tools
            ]
        out.append(entry)
    return out


def listed_status(state: State) -> McpServerStatus:
    match state:
        case "enabled":
            return "configured"
        case "invalid":
            return "failed"
        case "disabled" | "untrusted":
            return state

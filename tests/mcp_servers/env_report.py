"""A stdio MCP server with one tool, `environment`: the environment it was started with, as
JSON."""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("env-report", version="1.0.0")


@server.tool()
def environment() -> str:
    """This server's environment variables."""
    return json.dumps(dict(os.environ), sort_keys=True)


if __name__ == "__main__":
    server.run()

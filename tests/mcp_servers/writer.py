"""A stdio MCP server with one tool, `write`: writes text to a path, or says why it could not."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("writer", version="1.0.0")


@server.tool()
def write(path: str, text: str) -> str:
    """Write `text` to the file at `path`."""
    try:
        Path(path).write_text(text)
    except OSError as exc:
        return f"could not write {path}: {exc.strerror}"
    return f"wrote {path}"


if __name__ == "__main__":
    server.run()

"""A stdio MCP server with two tools: `slow` (sleeps, can crash the server) and `pixel` (an
image). With `DEMO_STATE_DIR` set it leaves marker files there: `pid-<pid>` at start,
`slow-started` and `slow-cancelled` around the slow tool."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("demo", version="1.2.3")


def mark(name: str, text: str = "") -> None:
    state = os.environ.get("DEMO_STATE_DIR")
    if state:
        Path(state, name).write_text(text)


@server.tool()
async def slow(seconds: float = 30.0, crash: bool = False) -> str:
    """Wait `seconds`, then say so. With `crash`, the server process exits mid-call."""
    mark("slow-started")
    if crash:
        os._exit(3)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        mark("slow-cancelled")
        raise
    return f"slept {seconds:g} s"


@server.tool(title="One pixel")
def pixel() -> Image:
    """A 1x1 PNG image."""
    return Image(data=PIXEL, format="png")


if __name__ == "__main__":
    mark(f"pid-{os.getpid()}", str(os.getpid()))
    server.run()

"""A streamable HTTP MCP server on 127.0.0.1: `lookup` answers from a small glossary, with the
entry as an embedded resource. It binds a free port and prints `PORT <n>` on stdout; requests
must carry the header `x-demo-token: <DEMO_TOKEN>` when that variable is set."""

from __future__ import annotations

import os
import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import EmbeddedResource, TextContent, TextResourceContents

GLOSSARY = {"mcp": "Model Context Protocol", "acp": "Agent Client Protocol"}

server = MCPServer("notes", version="0.1")


@server.tool()
def lookup(word: str) -> list:
    """Look a word up in the glossary."""
    meaning = GLOSSARY.get(word.lower(), "unknown")
    entry = TextResourceContents(uri=f"glossary://{word}", text=meaning, mime_type="text/plain")
    return [
        TextContent(type="text", text=f"{word}: {meaning}"),
        EmbeddedResource(type="resource", resource=entry),
    ]


class TokenCheck:
    """ASGI middleware: 401 without the expected token header."""

    def __init__(self, app, token: str | None):
        self.app, self.token = app, token

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self.token:
            headers = dict(scope.get("headers") or [])
            if headers.get(b"x-demo-token", b"").decode() != self.token:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"bad token"})
                return
        await self.app(scope, receive, send)


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    app = TokenCheck(server.streamable_http_app(), os.environ.get("DEMO_TOKEN"))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)

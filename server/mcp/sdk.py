"""A transport for MCP servers that live in an SDK host's process (`createSdkMcpServer`,
`create_sdk_mcp_server`): every JSON-RPC message goes to the host in a `mcp_message` control
request (the stream-json door's `bridge`) and the host's `mcp_response` comes back as the
server's message. A notification's acknowledgement is not a message of the server."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

Bridge = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Sends one JSON-RPC message to the host's server; its reply (None: none)."""


@asynccontextmanager
async def sdk_streams(bridge: Bridge) -> AsyncIterator[Any]:
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](32)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](32)

    async def forward(message: SessionMessage) -> None:
        wire = message.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        try:
            reply = await bridge(wire)
        except Exception as exc:
            log.warning("SDK MCP message failed: %s", exc)
            reply = _error(wire, str(exc))
        if reply is None or "id" not in wire or not isinstance(reply, dict):
            return
        try:
            parsed = types.jsonrpc_message_adapter.validate_python(reply, by_name=False)
        except ValueError as exc:
            parsed = types.jsonrpc_message_adapter.validate_python(_error(wire, str(exc)))
        await to_session.send(SessionMessage(parsed))

    async def pump() -> None:
        async with from_session, anyio.create_task_group() as calls:
            async for message in from_session:
                calls.start_soon(forward, message)

    async with anyio.create_task_group() as tg, to_session:
        tg.start_soon(pump)
        try:
            yield from_server, to_server
        finally:
            tg.cancel_scope.cancel()


def _error(wire: dict[str, Any], text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": wire.get("id"), "error": {"code": -32603, "message": text}}

"""The channel the session service talks through on the native front door: events out as
`session/update` notifications, permission and question requests to the client."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

from lsprotocol import types as lsp
from pydantic import ValidationError

from protocol.base import WireModel
from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionUpdateParams,
)
from server.frontends.jsonrpc_bridge import AgentlsServerProtocol
from server.frontends.jsonrpc_transport import CoalescingWriter
from server.sessions.model import ClientCapabilities

log = logging.getLogger(__name__)
_HEADER = b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"


class JsonRpcChannel:
    def __init__(self, protocol: AgentlsServerProtocol):
        self.protocol = protocol

    @property
    def capabilities(self) -> ClientCapabilities:
        caps = self.protocol.client_agentls
        return ClientCapabilities(
            questions=caps.questions,
            permissions=caps.permissions,
            images=caps.images,
            diffs=caps.diffs,
            report_turns=caps.report_turns,
        )

    def send_update(self, params: SessionUpdateParams) -> None:
        # A plain dict skips the attrs/cattrs round trip pygls would make for every event, and
        # the frame is encoded here: pygls's `json.dumps(..., default=...)` builds a new encoder
        # for each message, which cost more than the rest of a delta's way out. Same bytes.
        message = {"jsonrpc": "2.0", "method": "session/update", "params": params.to_wire()}
        writer = self.protocol.writer
        if not isinstance(writer, CoalescingWriter) or not self.protocol._include_headers:
            self.protocol._send_data(message)
            return
        body = json.dumps(message).encode()
        writer.write(_HEADER % len(body) + body)

    async def request_permission(self, params: RequestPermissionParams) -> RequestPermissionResult:
        raw = await self._request("session/request_permission", params)
        try:
            return RequestPermissionResult.model_validate(raw)
        except ValidationError:
            log.warning("malformed permission answer %r; treated as cancelled", raw)
            return RequestPermissionResult.model_validate({"outcome": {"outcome": "cancelled"}})

    async def ask_question(self, params: AskQuestionParams) -> AskQuestionResult:
        raw = await self._request("session/ask_question", params)
        try:
            return AskQuestionResult.model_validate(raw)
        except ValidationError:
            log.warning("malformed question answer %r; treated as declined", raw)
            return AskQuestionResult(declined=True)

    async def _request(self, method: str, params: WireModel) -> Any:
        msg_id = f"agentls-{uuid.uuid4().hex[:12]}"
        future = self.protocol.send_request(method, params.to_wire(), msg_id=msg_id)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self.protocol._request_futures.pop(msg_id, None)
            self.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise

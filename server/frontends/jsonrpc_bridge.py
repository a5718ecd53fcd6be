"""The pygls bridge, used by the server and by test clients: agentls methods travel as plain
dicts (pygls knows only LSP's own types), and `initialize` carries agentls's capabilities under
`experimental.agentls` both ways."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

from protocol.methods import BY_NAME, PROTOCOL_VERSION
from server import __version__
from server.engines.registry import ENGINE_IDS
from server.providers.registry import PROVIDERS


@attrs.define
class RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponse:
    id: int | str
    jsonrpc: str
    result: Any = None


def make_converter():
    converter = default_converter()
    for cls in (RawRequest, RawNotification, RawResponse):
        fields = [f.name for f in attrs.fields(cls)]
        converter.register_structure_hook(
            cls, lambda obj, c, fields=fields: c(**{k: obj[k] for k in fields if k in obj})
        )
    return converter


class AgentlsProtocol(LanguageServerProtocol):
    """LSP lifecycle from pygls, agentls methods as raw dicts (server and client side)."""

    client_agentls: dict[str, Any] = {}
    on_cancel_request: Callable[[Any], bool] | None = None

    def get_message_type(self, method: str):  # type: ignore[override]  # pygls caches it
        if method in BY_NAME:
            return RawNotification if BY_NAME[method].is_notification else RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str):  # type: ignore[override]  # pygls caches it
        if method in BY_NAME:
            return RawResponse
        return super().get_result_type(method)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        result = yield from super().lsp_initialize(params)
        experimental = params.capabilities.experimental
        if isinstance(experimental, dict) and isinstance(experimental.get("agentls"), dict):
            self.client_agentls = experimental["agentls"]
        result.capabilities.experimental = {"agentls": server_capabilities()}
        return result

    def _handle_cancel_notification(self, msg_id):
        # A cancelled session/prompt must end with an `aborted` terminal, not a dropped future.
        if self.on_cancel_request and self.on_cancel_request(msg_id):
            return
        super()._handle_cancel_notification(msg_id)


def server_capabilities() -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "version": __version__,
        "engines": list(ENGINE_IDS),
        "providers": sorted(PROVIDERS),
        "features": ["steer", "images", "permissions", "questions", "mcp"],
    }

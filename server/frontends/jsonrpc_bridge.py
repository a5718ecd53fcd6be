"""The pygls bridge, used by the server and by test clients: agentls methods travel as plain
dicts (pygls knows only LSP's own types), and `initialize` carries agentls's capabilities under
`experimental.agentls` both ways."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import attrs
from lsprotocol import types as lsp
from lsprotocol.types import ResponseError
from pydantic import ValidationError
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

from protocol.errors import SERVER_NOT_INITIALIZED
from protocol.lifecycle import (
    AgentlsClientCapabilities,
    AgentlsServerCapabilities,
    SandboxStatus,
)
from protocol.methods import BY_NAME, PROTOCOL_VERSION
from server import __version__
from server.engines.registry import ENGINE_IDS
from server.providers.registry import PROVIDERS

log = logging.getLogger(__name__)


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

    on_cancel_request: Callable[[Any], bool] | None = None

    def get_message_type(self, method: str):  # type: ignore[override]  # pygls caches it
        if method in BY_NAME:
            return RawNotification if BY_NAME[method].is_notification else RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str):  # type: ignore[override]  # pygls caches it
        if method in BY_NAME:
            return RawResponse
        return super().get_result_type(method)

    def _handle_cancel_notification(self, msg_id):
        # A cancelled session/prompt must end with an `aborted` terminal, not a dropped future.
        if self.on_cancel_request and self.on_cancel_request(msg_id):
            return
        super()._handle_cancel_notification(msg_id)


class AgentlsServerProtocol(AgentlsProtocol):
    """The server's side: LSP's lifecycle rules, and only agentls's capabilities advertised."""

    initialized_by_client = False
    client_agentls = AgentlsClientCapabilities()
    """What the client said it can show, read once from `initialize`."""
    sandbox_status: Callable[[], SandboxStatus] | None = None

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        result = yield from super().lsp_initialize(params)
        experimental = params.capabilities.experimental
        if isinstance(experimental, dict) and isinstance(experimental.get("agentls"), dict):
            try:
                self.client_agentls = AgentlsClientCapabilities.model_validate(
                    experimental["agentls"]
                )
            except ValidationError:
                log.warning("ignored malformed agentls client capabilities")
        self.initialized_by_client = True
        # pygls fills in text-document sync and workspace folders agentls does not use.
        result.capabilities = lsp.ServerCapabilities(
            experimental={"agentls": server_capabilities(self.sandbox_status() if self.sandbox_status else None)}
        )
        return result

    def _handle_request(self, msg_id, method_name, params):
        if self.initialized_by_client or method_name == lsp.INITIALIZE:
            return super()._handle_request(msg_id, method_name, params)
        message = f"ServerNotInitialized: send `initialize` before {method_name!r}"
        self._send_response(msg_id, None, ResponseError(SERVER_NOT_INITIALIZED, message))

    def _handle_notification(self, method_name, params):
        # LSP: before `initialize`, notifications are dropped, except `exit`.
        if self.initialized_by_client or method_name == lsp.EXIT:
            return super()._handle_notification(method_name, params)
        log.warning("dropped %r: it came before initialize", method_name)


def server_capabilities(sandbox: SandboxStatus | None = None) -> dict[str, Any]:
    return AgentlsServerCapabilities(
        sandbox=sandbox,
        protocol_version=PROTOCOL_VERSION,
        version=__version__,
        engines=list(ENGINE_IDS),
        providers=sorted(PROVIDERS),
        features=["steer", "images", "permissions", "questions", "mcp"],
    ).to_wire()

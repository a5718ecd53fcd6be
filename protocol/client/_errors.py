"""Errors the client raises.

    AgentlsError
    ├── ConnectionClosed        the server exited or closed its stdout
    ├── ProtocolVersionError    the server speaks another protocol version
    └── RpcError                the server answered a request with a JSON-RPC error
        ├── ParseError            -32700
        ├── InvalidRequest        -32600
        ├── MethodNotFound        -32601
        ├── InvalidParams         -32602  (`data` lists the failing field paths)
        ├── InternalError         -32603
        ├── ServerNotInitialized  -32002  (a request before `initialize`)
        ├── RequestCancelled      -32800  (the request was cancelled with `$/cancelRequest`)
        ├── SessionNotFound       -31001
        ├── SessionBusy           -31002
        ├── EngineUnavailable     -31003
        ├── ProviderUnavailable   -31004
        ├── Unauthorized          -31005  (a listening server refused the token)
        └── RewindRefused         -31006  (`data.conflicts`: files changed since)

A code without a class of its own (from a newer server) raises plain `RpcError`.
"""

from __future__ import annotations

from typing import Any

from protocol import errors


class AgentlsError(Exception):
    """Base class of every error this client raises."""


class ConnectionClosed(AgentlsError):
    """The server went away; requests still waiting for an answer fail with this."""


class ProtocolVersionError(AgentlsError):
    """The server's `protocolVersion` is not the one this client speaks."""


class RpcError(AgentlsError):
    """A JSON-RPC error response: `code`, `message` and the optional `data`."""

    code: int = 0

    def __init__(self, message: str, *, code: int | None = None, data: Any = None):
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.message} (JSON-RPC error {self.code})"


class ParseError(RpcError):
    """The server could not parse a frame this client sent."""

    code = errors.PARSE_ERROR


class InvalidRequest(RpcError):
    """The message was not a valid JSON-RPC 2.0 request."""

    code = errors.INVALID_REQUEST


class MethodNotFound(RpcError):
    """The server does not know the method (an older server, or a typo)."""

    code = errors.METHOD_NOT_FOUND


class InvalidParams(RpcError):
    """The params did not validate; `data` is a list of `{path, message, type}`."""

    code = errors.INVALID_PARAMS


class InternalError(RpcError):
    """The server failed while handling the request."""

    code = errors.INTERNAL_ERROR


class ServerNotInitialized(RpcError):
    """A request came before `initialize`; `AgentlsClient.start` sends it first."""

    code = errors.SERVER_NOT_INITIALIZED


class RequestCancelled(RpcError):
    """The request was cancelled (`$/cancelRequest`) before the server answered it."""

    code = errors.REQUEST_CANCELLED


class SessionNotFound(RpcError):
    """No session with that id (closed, never created, or from another server)."""

    code = errors.SESSION_NOT_FOUND


class SessionBusy(RpcError):
    """The session is running a turn: cancel it, wait for it, or steer it."""

    code = errors.SESSION_BUSY


class EngineUnavailable(RpcError):
    """The requested engine is unknown or cannot start."""

    code = errors.ENGINE_UNAVAILABLE


class ProviderUnavailable(RpcError):
    """The model provider is unknown or not configured (e.g. a missing API key)."""

    code = errors.PROVIDER_UNAVAILABLE


class Unauthorized(RpcError):
    """A listening server refused the connection's token; it closes the connection."""

    code = errors.UNAUTHORIZED


class RewindRefused(RpcError):
    """`session/rewind` changed nothing: files it would restore changed outside agentls since
    (`data["conflicts"]`), or the turn is not the session's."""

    code = errors.REWIND_REFUSED


ERROR_CLASSES: dict[int, type[RpcError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        ServerNotInitialized,
        RequestCancelled,
        SessionNotFound,
        SessionBusy,
        EngineUnavailable,
        ProviderUnavailable,
        Unauthorized,
        RewindRefused,
    )
}


def error_from(error: Any) -> RpcError:
    """The exception for the `error` member of a response."""
    if not isinstance(error, dict):
        return RpcError(f"malformed error: {error!r}", code=errors.INTERNAL_ERROR)
    code = error.get("code")
    message = str(error.get("message") or "")
    cls = ERROR_CLASSES.get(code, RpcError) if isinstance(code, int) else RpcError
    return cls(message, code=code if isinstance(code, int) else None, data=error.get("data"))

"""JSON-RPC error codes used by every agentls front door.

JSON-RPC reserves -32768..-32000 for its own codes and LSP's (-32099..-32000 and -32899..-32800:
`ServerNotInitialized` -32002, `RequestCancelled` -32800, ...). agentls's own codes live outside
that range, at -31001 and below, so a client's LSP library never mistakes one for the other.
"""

from __future__ import annotations

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800
SESSION_NOT_FOUND = -31001
SESSION_BUSY = -31002
ENGINE_UNAVAILABLE = -31003
PROVIDER_UNAVAILABLE = -31004
UNAUTHORIZED = -31005
REWIND_REFUSED = -31006

STANDARD = frozenset(
    {
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        INTERNAL_ERROR,
        SERVER_NOT_INITIALIZED,
        REQUEST_CANCELLED,
    }
)
"""The codes JSON-RPC and LSP define; the rest are agentls's."""

ERROR_CODES: dict[int, str] = {
    PARSE_ERROR: "the frame body is not valid JSON",
    INVALID_REQUEST: "the message is not a JSON-RPC 2.0 request or notification",
    METHOD_NOT_FOUND: "no such method",
    INVALID_PARAMS: "params do not match the method's schema; `data` lists the failing fields",
    INTERNAL_ERROR: "the server failed while handling the request",
    SERVER_NOT_INITIALIZED: "a request came before `initialize` (LSP's ServerNotInitialized)",
    REQUEST_CANCELLED: "the client cancelled the request with `$/cancelRequest`",
    SESSION_NOT_FOUND: "no session with that id",
    SESSION_BUSY: "the session is running a turn; cancel it, wait, or steer",
    ENGINE_UNAVAILABLE: "the requested engine cannot start",
    PROVIDER_UNAVAILABLE: "the model provider is unknown or not configured (e.g. missing API key)",
    UNAUTHORIZED: "a connection to a listening server presented no token or a wrong one; it is "
    "closed after this answer",
    REWIND_REFUSED: "`session/rewind` changed nothing: files it would restore changed outside "
    "agentls since (`data.conflicts` lists them), or the turn is not this session's",
}

ERROR_NAMES: dict[int, str] = {
    PARSE_ERROR: "ParseError",
    INVALID_REQUEST: "InvalidRequest",
    METHOD_NOT_FOUND: "MethodNotFound",
    INVALID_PARAMS: "InvalidParams",
    INTERNAL_ERROR: "InternalError",
    SERVER_NOT_INITIALIZED: "ServerNotInitialized",
    REQUEST_CANCELLED: "RequestCancelled",
    SESSION_NOT_FOUND: "SessionNotFound",
    SESSION_BUSY: "SessionBusy",
    ENGINE_UNAVAILABLE: "EngineUnavailable",
    PROVIDER_UNAVAILABLE: "ProviderUnavailable",
    UNAUTHORIZED: "Unauthorized",
    REWIND_REFUSED: "RewindRefused",
}
"""The name each code has in the clients (the Python client's exception classes, the TypeScript
`ErrorCode` table, the JetBrains core's `RpcException` constants)."""

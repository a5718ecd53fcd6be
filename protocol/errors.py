"""JSON-RPC error codes used by every agentls front door."""

from __future__ import annotations

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SESSION_NOT_FOUND = -32001
SESSION_BUSY = -32002
ENGINE_UNAVAILABLE = -32003
PROVIDER_UNAVAILABLE = -32004

ERROR_CODES: dict[int, str] = {
    PARSE_ERROR: "the frame body is not valid JSON",
    INVALID_REQUEST: "the message is not a JSON-RPC 2.0 request or notification",
    METHOD_NOT_FOUND: "no such method",
    INVALID_PARAMS: "params do not match the method's schema; `data` lists the failing fields",
    INTERNAL_ERROR: "the server failed while handling the request",
    SESSION_NOT_FOUND: "no session with that id",
    SESSION_BUSY: "the session is running a turn; cancel it, wait, or steer",
    ENGINE_UNAVAILABLE: "the requested engine cannot start",
    PROVIDER_UNAVAILABLE: "the model provider is unknown or not configured (e.g. missing API key)",
}

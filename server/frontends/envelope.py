"""JSON-RPC 2.0 envelope checks shared by the doors that speak it (LSP-framed and NDJSON):
what a message from outside must look like before any dispatcher sees it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def reply_id(data: Any) -> str | int | None:
    """The id an error reply carries: the message's own when usable, else null."""
    msg_id = data.get("id") if isinstance(data, dict) else None
    return msg_id if valid_id(msg_id) else None


def envelope_problem(data: Any, is_notification: Callable[[str], bool]) -> str | None:
    if isinstance(data, list):
        return "batch requests are not supported"
    if not isinstance(data, dict):
        return "a JSON-RPC message must be an object"
    if data.get("jsonrpc") != "2.0":
        return 'missing or wrong "jsonrpc" (must be "2.0")'
    if "method" in data:
        if not isinstance(data["method"], str):
            return '"method" must be a string'
        if "id" not in data:
            return None
        if not valid_id(data["id"]):
            return '"id" must be a string or an integer'
        if is_notification(data["method"]):
            return f"{data['method']} is a notification: send it without an id"
        return None
    if "id" in data and ("result" in data or "error" in data):
        return (
            None
            if data["id"] is None or valid_id(data["id"])
            else '"id" must be a string or an integer'
        )
    return "neither a request, a notification nor a response"


def error_reply(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}

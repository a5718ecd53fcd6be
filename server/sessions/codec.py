"""Normalized messages, stream events and model requests as JSON-able dicts, and the native
engine's session snapshot.

Every dict carries the dataclass's `kind`, so decoding needs no outside context. Thinking
signatures survive the round trip: a restored conversation can be sent back to the provider.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from server.agent import pairing
from server.providers.messages import (
    Finish,
    ImagePart,
    Message,
    ModelRequest,
    Part,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCallPart,
    ToolCallReady,
    ToolResultPart,
    Usage,
)

if TYPE_CHECKING:
    from server.engines.native import NativeSession

SNAPSHOT_VERSION = 1

_PARTS: dict[str, type] = {
    "text": TextPart,
    "image": ImagePart,
    "thinking": ThinkingPart,
    "tool_call": ToolCallPart,
    "tool_result": ToolResultPart,
}


class CodecError(ValueError):
    """A stored dict does not decode (unknown kind, missing field)."""


def to_dict(value: Any) -> dict[str, Any]:
    """Any of our message or event dataclasses as a dict (`kind` included)."""
    return dataclasses.asdict(value)


def part_from_dict(data: dict[str, Any]) -> Part:
    cls = _PARTS.get(data.get("kind", ""))
    if cls is None:
        raise CodecError(f"unknown message part kind {data.get('kind')!r}")
    try:
        if cls is ToolResultPart:
            images = [ImagePart(i["data_url"]) for i in data.get("images") or []]
            return ToolResultPart(**{**data, "images": images})
        return cls(**data)
    except (TypeError, KeyError) as exc:
        raise CodecError(f"bad {data['kind']} part: {exc}") from exc


def message_to_dict(message: Message) -> dict[str, Any]:
    return {"role": message.role, "parts": [to_dict(p) for p in message.parts]}


def message_from_dict(data: dict[str, Any]) -> Message:
    return Message(data["role"], [part_from_dict(p) for p in data.get("parts", [])])


def event_from_dict(data: dict[str, Any]) -> StreamEvent:
    kind = data.get("kind")
    if kind == "text_delta":
        return TextDelta(data["text"])
    if kind == "thinking_delta":
        return ThinkingDelta(data["text"], data.get("signature"), raw=data.get("raw"))
    if kind == "tool_call":
        call = data["call"]
        return ToolCallReady(ToolCallPart(call["id"], call["name"], call.get("arguments") or {}))
    if kind == "finish":
        return Finish(data["reason"], Usage(**data.get("usage", {})))
    raise CodecError(f"unknown stream event kind {kind!r}")


def request_to_dict(request: ModelRequest, *, reused: int = 0) -> dict[str, Any]:
    """A model call for the trace. The first `reused` messages were already in the previous
    request of this provider and are only counted, so a long session's trace stays linear."""
    return {
        "model": request.model,
        "system": request.system,
        "tools": [t.name for t in request.tools],
        "options": request.options,
        "messageCount": len(request.messages),
        "reused": reused,
        "messages": [message_to_dict(m) for m in request.messages[reused:]],
    }


# -- the native engine's snapshot --------------------------------------------------------------


def native_snapshot(session: NativeSession) -> dict[str, Any]:
    """What resuming a native session needs, JSON-able."""
    view = session.view
    return {
        "version": SNAPSHOT_VERSION,
        "provider": session.settings.provider,
        "model": session.settings.model,
        "mode": session.permissions.mode,
        "allowRules": sorted(session.permissions.allow_rules),
        "denyRules": sorted(session.permissions.deny_rules),
        "toolState": _jsonable(session.tool_ctx.state),
        "view": {
            "summary": view.summary,
            "summarized": view.summarized,
            "elided": sorted(view.elided),
        },
        "history": [message_to_dict(m) for m in session.history],
    }


def apply_native_snapshot(session: NativeSession, snapshot: dict[str, Any]) -> None:
    """Put a snapshot's history, permissions and tool state back into a fresh session. A tool
    call left without its result (by a turn interrupted before results were always written)
    is answered as interrupted, so the history is one every provider accepts."""
    session.history = [message_from_dict(m) for m in snapshot.get("history", [])]
    mended = pairing.mend(session.history, pairing.STORED)
    if snapshot.get("mode"):
        session.permissions.mode = snapshot["mode"]
    session.permissions.allow_rules = set(snapshot.get("allowRules", []))
    session.permissions.deny_rules = set(snapshot.get("denyRules", []))
    session.tool_ctx.state.update(snapshot.get("toolState") or {})
    view = snapshot.get("view") or {}
    session.view.summary = view.get("summary")
    session.view.summarized = int(view.get("summarized") or 0)
    for index in mended.inserted:  # a result joins its call's side of the summary boundary
        if index <= session.view.summarized:
            session.view.summarized += 1
    session.view.elided = set(view.get("elided") or [])


def _jsonable(state: dict[str, Any]) -> dict[str, Any]:
    """Tool state minus anything that is not plain JSON (live handles never resume)."""
    return {k: v for k, v in state.items() if _is_plain(v)}


def _is_plain(value: Any) -> bool:
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False

"""Normalized messages, stream events and model requests as JSON-able dicts.

Every dict carries the dataclass's `kind`, so decoding needs no outside context. Thinking
signatures survive the round trip: a restored conversation can be sent back to the provider.
"""

from __future__ import annotations

import dataclasses
from typing import Any

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
            images = [ImagePart(**i) for i in data.get("images") or []]
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


def add_event(out: list[dict[str, Any]], event: StreamEvent) -> None:
    """Append a model call's stream event for the trace, as it arrives (a copy: later changes
    to the event do not reach it). Consecutive text deltas join one `text_deltas` dict holding
    their texts, so a reply of many deltas stays about the size of its text."""
    if isinstance(event, TextDelta):
        last = out[-1] if out else None
        if last is not None and last["kind"] == "text_deltas":
            last["texts"].append(event.text)
        else:
            out.append({"kind": "text_deltas", "texts": [event.text]})
    else:
        out.append(to_dict(event))


def events_from_dicts(data: list[dict[str, Any]]) -> list[StreamEvent]:
    """The stream `add_event` wrote, delta for delta (one dict per text delta is read too)."""
    events: list[StreamEvent] = []
    for item in data:
        if item.get("kind") == "text_deltas":
            events += [TextDelta(text) for text in item.get("texts", [])]
        else:
            events.append(event_from_dict(item))
    return events


REPEATABLE = ("system", "tools", "options")
"""Parts of a request that repeat from call to call; the trace writes them once."""


def request_to_dict(
    request: ModelRequest, *, reused: int = 0, previous: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A model call for the trace. The first `reused` messages were already in the previous
    request of this provider and are only counted, and the parts equal to those of `previous`
    (the previous request's dict, of the same agent) are named in `unchanged` instead of written:
    a long session's trace stays linear."""
    full = {
        "model": request.model,
        "system": request.system,
        "tools": [t.name for t in request.tools],
        "options": request.options,
    }
    unchanged = [k for k in REPEATABLE if previous is not None and previous.get(k) == full[k]]
    out = {k: v for k, v in full.items() if k not in unchanged}
    if unchanged:
        out["unchanged"] = unchanged
    return {
        **out,
        "messageCount": len(request.messages),
        "reused": reused,
        "messages": [message_to_dict(m) for m in request.messages[reused:]],
    }

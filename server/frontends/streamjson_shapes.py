"""The Anthropic Messages API shapes stream-json frames carry (`BetaMessage`, `BetaUsage`, the
raw stream events), with every field those types require: what agentls does not know is null
where the type allows it."""

from __future__ import annotations

from typing import Any


def message_usage(usage: dict[str, int] | None = None) -> dict[str, Any]:
    """`BetaUsage` of one model call, from our wire usage (camelCase counts)."""
    usage = usage or {}
    return {
        "input_tokens": usage.get("inputTokens", 0),
        "output_tokens": usage.get("outputTokens", 0),
        "cache_read_input_tokens": usage.get("cacheReadTokens", 0),
        "cache_creation_input_tokens": usage.get("cacheWriteTokens", 0),
        "cache_creation": None,
        "fallback_credit": None,
        "inference_geo": None,
        "iterations": None,
        "output_tokens_details": None,
        "server_tool_use": None,
        "service_tier": None,
        "speed": None,
    }


def result_usage(usage: dict[str, int]) -> dict[str, Any]:
    """A `result` frame's usage: the SDK types it non-nullable, so unknowns are zeros."""
    written = usage.get("cacheWriteTokens", 0)
    return {
        **message_usage(usage),
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": written},
        "inference_geo": "",
        "iterations": [],
        "output_tokens_details": {"thinking_tokens": 0},
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "speed": "standard",
    }


def assistant_message(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    usage: dict[str, int] | None = None,
    stop_reason: str | None = None,
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "stop_details": None,
        "container": None,
        "context_management": None,
        "diagnostics": None,
        "usage": message_usage(usage),
    }


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "citations": None}


def message_delta(stop_reason: str, usage: dict[str, int]) -> dict[str, Any]:
    """The `message_delta` stream event closing a model call, with the call's usage."""
    delta = {
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "stop_details": None,
        "container": None,
    }
    full = message_usage(usage)
    for key in ("inference_geo", "service_tier", "speed", "cache_creation"):
        del full[key]
    return {"type": "message_delta", "delta": delta, "usage": full, "context_management": None}

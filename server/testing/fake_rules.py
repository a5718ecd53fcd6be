"""What the real APIs refuse, for the loopback fake: each rule answers with that provider's
status and error text, chosen by the model id in the request.

- DeepSeek reasoner and Kimi thinking models: every assistant message with tool calls must
  carry `reasoning_content`.
- Kimi k2.5 / k2.6 / k3 / k2-thinking (direct): a temperature other than 1 is refused.
- OpenAI models refuse `reasoning_content` and `reasoning_details` in messages.
- OpenRouter ids (`vendor/model`): reasoning arrives as `reasoning_details` with a signature;
  for Kimi thinking models those details must come back unchanged on tool-call messages, or
  the upstream refusal arrives wrapped in `error.metadata.raw`.
- Anthropic: `output_config.effort` must be one the model family supports; with thinking on,
  the latest assistant message of a tool loop must hold the thinking and redacted_thinking
  blocks of the reply exactly as they were sent, in the order they were sent (its text blocks
  may differ).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any

Refusal = tuple[int, dict[str, Any]]

_KIMI_THINKING = re.compile(r"kimi-k(2[.-]5|2[.-]6|3|2-thinking)")
_EFFORTS = {
    "xhigh": ("high", "low", "max", "medium", "xhigh"),
    "max": ("high", "low", "max", "medium"),
    "basic": ("high", "low", "medium"),
}
_ANTHROPIC_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def signature(text: str) -> str:
    return "sig_" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _tail(model: Any) -> str:
    return str(model or "").lower().rsplit("/", 1)[-1]


def _is_openrouter(model: Any) -> bool:
    return "/" in str(model or "")


def _needs_reasoning_content(model: Any) -> bool:
    tail = _tail(model)
    return tail.startswith("deepseek-reasoner") or bool(_KIMI_THINKING.match(tail))


def _effort_levels(model: str) -> tuple[str, ...] | None:
    match = re.match(r"claude-(opus|sonnet|haiku)-(\d+)-(\d+)", _tail(model).replace(".", "-"))
    if match is None:
        return None
    name, version = match[1], (int(match[2]), int(match[3]))
    if name == "opus" and version >= (4, 7):
        return _EFFORTS["xhigh"]
    if version >= (4, 6):
        return _EFFORTS["max"]
    return _EFFORTS["basic"]


def _openai_error(message: str, code: Any = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _anthropic_error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def reasoning_deltas(model: Any, pieces: list[str]) -> list[dict[str, Any]]:
    """Chunk deltas carrying the reasoning text: OpenRouter's `reasoning_details` (signed at the
    end) or the `reasoning_content` DeepSeek and Moonshot stream."""
    if not _is_openrouter(model):
        return [{"reasoning_content": p} for p in pieces]
    detail = {"type": "reasoning.text", "format": "unknown", "index": 0}
    deltas = [{"reasoning": p, "reasoning_details": [{**detail, "text": p}]} for p in pieces]
    if pieces:
        signed = {**detail, "text": "", "signature": signature("".join(pieces))}
        deltas.append({"reasoning": "", "reasoning_details": [signed]})
    return deltas


class Rules:
    """One fake server's rules, and what it must see again (the blocks of its tool-use replies)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._anthropic_sent: dict[str, list[dict[str, Any]]] = {}

    def remember_anthropic(self, blocks: list[dict[str, Any]]) -> None:
        """The complete content blocks of a reply, as they must come back (tool_use ids set)."""
        ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
        if ids and any(b["type"] in ("thinking", "redacted_thinking") for b in blocks):
            with self._lock:
                self._anthropic_sent[ids[0]] = blocks

    def refusal(self, wire: str, body: Any) -> Refusal | None:
        if not isinstance(body, dict):
            return None
        if wire == "openai":
            return _openai_refusal(body)
        if wire == "anthropic":
            return _effort_refusal(body) or self._thinking_refusal(body)
        return None

    def _thinking_refusal(self, body: dict[str, Any]) -> Refusal | None:
        if (body.get("thinking") or {}).get("type") not in ("enabled", "adaptive"):
            return None
        messages = body.get("messages") or []
        last = next(
            (i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] == "assistant"),
            None,
        )
        if last is None or not isinstance(messages[last]["content"], list):
            return None
        content = [_without_cache(b) for b in messages[last]["content"]]
        ids = [b.get("id") for b in content if b.get("type") == "tool_use"]
        with self._lock:
            sent = self._anthropic_sent.get(ids[0]) if ids else None
        if sent is None:
            return None
        thinking_first = sent[0]["type"] in ("thinking", "redacted_thinking")
        if thinking_first and content and content[0].get("type") != sent[0]["type"]:
            return 400, _anthropic_error(
                f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{content[0].get('type')}`. When `thinking` is enabled, a final "
                "`assistant` message must start with a thinking block (preceeding the lastmost "
                "set of `tool_use` and `tool_result` blocks). We recommend you include thinking "
                "blocks from previous turns. To avoid this requirement, disable `thinking`. "
                f"Please consult our documentation at {_ANTHROPIC_DOCS}"
            )
        # Text blocks may be dropped or changed (a whitespace-only one must be); the rest not.
        kept = [(i, b) for i, b in enumerate(content) if b.get("type") != "text"]
        sent = [b for b in sent if b["type"] != "text"]
        if [b for _, b in kept] != sent:
            at = next(
                (i for n, (i, b) in enumerate(kept) if n >= len(sent) or b != sent[n]),
                kept[-1][0] + 1 if kept else 0,
            )
            return 400, _anthropic_error(
                f"messages.{last}.content.{at}: `thinking` or `redacted_thinking` blocks in the "
                "latest assistant message cannot be modified. These blocks must remain as they "
                "were in the original response."
            )
        return None


def _without_cache(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _effort_refusal(body: dict[str, Any]) -> Refusal | None:
    effort = (body.get("output_config") or {}).get("effort")
    levels = _effort_levels(str(body.get("model") or ""))
    if effort is None or levels is None or effort in levels:
        return None
    return 400, _anthropic_error(
        f"This model does not support effort level '{effort}'. "
        f"Supported levels: {', '.join(levels)}."
    )


def _openai_refusal(body: dict[str, Any]) -> Refusal | None:
    model = body.get("model")
    tail = _tail(model)
    temperature = body.get("temperature")
    direct = not _is_openrouter(model)
    if direct and _KIMI_THINKING.match(tail) and temperature is not None and temperature != 1:
        return 400, _openai_error("invalid temperature: only 1 is allowed for this model")
    messages = body.get("messages") or []
    if direct and re.match(r"(gpt-|o\d)", tail):
        for index, message in enumerate(messages):
            for key in ("reasoning_content", "reasoning_details"):
                if key in message:
                    return 400, _openai_error(
                        f"Additional properties are not allowed ('{key}' was unexpected) "
                        f"- 'messages.{index}'"
                    )
    if not _needs_reasoning_content(model):
        return None
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        if _is_openrouter(model):
            if not _signed_details(message.get("reasoning_details")):
                return 400, _openrouter_upstream(index)
        elif "reasoning_content" not in message:
            return 400, _openai_error(_missing_reasoning(index))
    return None


def _missing_reasoning(index: int) -> str:
    return f"Missing `reasoning_content` field in the assistant message at message index {index}"


def _signed_details(details: Any) -> bool:
    if not isinstance(details, list) or not details:
        return False
    texts = [d for d in details if isinstance(d, dict) and d.get("type") == "reasoning.text"]
    return all(d.get("signature") == signature(d.get("text", "")) for d in texts) and bool(texts)


def _openrouter_upstream(index: int) -> dict[str, Any]:
    raw = json.dumps(_openai_error(_missing_reasoning(index)))
    error = {"message": "Provider returned error", "code": 400}
    error["metadata"] = {"raw": raw, "provider_name": "Moonshot AI"}
    return {"error": error}

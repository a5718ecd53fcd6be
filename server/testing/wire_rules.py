"""The history rules the real model services enforce, with their status and error text.

The fake model server checks every request against them (unless built `strict=False`), so a
transcript the real OpenAI or Anthropic API would refuse is refused in tests too. Each check
returns None for an acceptable request, else a `Refusal`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")


@dataclass(frozen=True)
class Refusal:
    """An HTTP 400 the way the service words it; `param` and `code` are OpenAI's fields."""

    message: str
    param: str | None = None
    status: int = 400
    code: str | None = None


def check(wire: str, body: Any) -> Refusal | None:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    if wire == "openai":
        return openai_chat(body["messages"])
    if wire == "anthropic":
        return anthropic_messages(body["messages"])
    return None  # Ollama's /api/chat accepts any sequence of messages


def openai_chat(messages: list[dict[str, Any]]) -> Refusal | None:
    pending: list[str] = []
    answered: set[str] = set()
    results: dict[str, int] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if (earlier := results.get(str(call_id))) is not None:
                return Refusal(
                    f"Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}', in "
                    f"messages[{earlier}] and messages[{index}].",
                    f"messages.[{index}].tool_call_id",
                )
            results[str(call_id)] = index
            if call_id not in pending or call_id in answered:
                return Refusal(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{index}].role",
                )
            answered.add(call_id)
            continue
        if missing := [c for c in pending if c not in answered]:
            return _openai_unanswered(missing, index)
        pending = [c["id"] for c in message.get("tool_calls") or []] if role == "assistant" else []
        answered = set()
    if missing := [c for c in pending if c not in answered]:
        return _openai_unanswered(missing, len(messages) - 1)
    return None


def _openai_unanswered(ids: list[str], index: int) -> Refusal:
    return Refusal(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids),
        f"messages.[{index}].role",
    )


def _anthropic_blocks(index: int, blocks: list[dict[str, Any]], uses: set[str]) -> Refusal | None:
    """Each text block must hold more than whitespace; tool_use ids are unique in the request
    and made of letters, digits, `_` and `-`."""
    for position, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text" and not block.get("text"):
            return Refusal(
                f"messages.{index}.content.{position}.text: text content blocks must be non-empty"
            )
        if kind == "text" and not str(block.get("text")).strip():
            return Refusal(
                f"messages.{index}.content.{position}: text content blocks must contain "
                "non-whitespace text"
            )
        if kind == "tool_use" and not _ANTHROPIC_ID.fullmatch(str(block.get("id"))):
            return Refusal(
                f"messages.{index}.content.{position}.tool_use.id: String should match pattern "
                "'^[a-zA-Z0-9_-]+$'"
            )
        if kind == "tool_use" and block.get("id") in uses:
            return Refusal(f"messages.{index}.content.{position}: `tool_use` ids must be unique")
        if kind == "tool_use":
            uses.add(str(block.get("id")))
    return None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content or [] if isinstance(b, dict)]


def anthropic_messages(messages: list[dict[str, Any]]) -> Refusal | None:
    previous_uses: list[str] = []
    all_uses: set[str] = set()
    for index, message in enumerate(messages):
        blocks = _blocks(message)
        final_assistant = index == len(messages) - 1 and message.get("role") == "assistant"
        if not blocks and not final_assistant:
            return Refusal(
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        if refusal := _anthropic_blocks(index, blocks, all_uses):
            return refusal
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if missing := [u for u in previous_uses if u not in results]:
            return Refusal(
                f"messages.{index - 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
        for position, block in enumerate(blocks):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in previous_uses:
                return Refusal(
                    f"messages.{index}.content.{position}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block "
                    "must have a corresponding `tool_use` block in the previous message."
                )
        uses = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
        previous_uses = uses if message.get("role") == "assistant" else []
    if previous_uses:
        return Refusal(
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
            f"blocks immediately after: {', '.join(previous_uses)}. Each `tool_use` block must "
            "have a corresponding `tool_result` block in the next message."
        )
    return None

"""The compacted view of a history: what is sent to the model instead of the full history once
compaction (`server.agent.compaction`) has summarized or elided parts of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.providers.messages import Message, ModelRequest, Part, TextPart, ToolResultPart


class Estimates:
    """What a request's estimate (`compaction.estimate`) found, kept for the next request of
    the same session, which repeats nearly all of it: each message's count by identity (a
    message in the history is never changed; a view's copy of one, or the per-call turn
    context, is a new object and counted afresh), and the tool list's, by each spec's name,
    description and the identity of its schema (a tool's schema is built once). Only the last
    request's messages are kept."""

    def __init__(self) -> None:
        self._messages: dict[int, tuple[Message, int]] = {}
        self._tools: tuple[list[tuple[str, str, Any]], int] = ([], 0)

    def tools(self, request: ModelRequest, count: Callable[[ModelRequest], int]) -> int:
        parts = [(t.name, t.description, t.parameters) for t in request.tools]
        seen, counted = self._tools
        if len(seen) != len(parts) or any(
            old[0] != new[0] or old[1] != new[1] or old[2] is not new[2]
            for old, new in zip(seen, parts, strict=True)
        ):
            counted = count(request)
            self._tools = (parts, counted)
        return counted

    def messages(self, messages: list[Message], count: Callable[[Message], int]) -> int:
        kept: dict[int, tuple[Message, int]] = {}
        total = 0
        for message in messages:
            entry = self._messages.get(id(message))
            if entry is None or entry[0] is not message:
                entry = (message, count(message))
            kept[id(message)] = entry
            total += entry[1]
        self._messages = kept
        return total


@dataclass
class ContextView:
    """What is sent instead of the full history: `history[:summarized]` replaced by `summary`,
    and the tool results in `elided` replaced by a note."""

    summary: str | None = None
    summarized: int = 0
    elided: set[str] = field(default_factory=set)
    estimates: Estimates = field(default_factory=Estimates, compare=False, repr=False)
    _copies: dict[int, tuple[Message, tuple[str, ...], Message]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """id(history message) -> (it, its results elided, its copy with the notes): the same copy
    each call while the elided set has not grown over it."""

    def messages(self, history: list[Message]) -> list[Message]:
        head = [summary_message(self.summary)] if self.summary else []
        return head + self.apply(history[self.summarized :])

    def apply(self, messages: list[Message]) -> list[Message]:
        if not self.elided:
            return messages
        return [self._message(m) for m in messages]

    def _message(self, message: Message) -> Message:
        """The message itself when none of its results is elided, else a copy with the notes,
        the same copy from call to call (both keep their identity for `Estimates`)."""
        if message.role != "tool":
            return message
        elided = tuple(
            p.tool_call_id
            for p in message.parts
            if isinstance(p, ToolResultPart) and p.tool_call_id in self.elided
        )
        if not elided:
            return message
        cached = self._copies.get(id(message))
        if cached is not None and cached[0] is message and cached[1] == elided:
            return cached[2]
        copy = Message(message.role, [self._part(p) for p in message.parts])
        self._copies[id(message)] = (message, elided, copy)
        return copy

    def _part(self, part: Part) -> Part:
        if isinstance(part, ToolResultPart) and part.tool_call_id in self.elided:
            note = (
                f"[output of {part.name} ({len(part.content)} characters) removed to save "
                "context; run the tool again if you need it]"
            )
            return ToolResultPart(part.tool_call_id, part.name, note, part.is_error)
        return part


def summary_message(summary: str) -> Message:
    text = (
        "<conversation-summary>\nThe earlier part of this conversation was summarized to save "
        f"context:\n{summary}\n</conversation-summary>"
    )
    return Message("user", [TextPart(text)])

"""The compacted view of a history: what is sent to the model instead of the full history once
compaction (`server.agent.compaction`) has summarized or elided parts of it."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.providers.messages import Message, Part, TextPart, ToolResultPart


@dataclass
class ContextView:
    """What is sent instead of the full history: `history[:summarized]` replaced by `summary`,
    and the tool results in `elided` replaced by a note."""

    summary: str | None = None
    summarized: int = 0
    elided: set[str] = field(default_factory=set)

    def messages(self, history: list[Message]) -> list[Message]:
        head = [summary_message(self.summary)] if self.summary else []
        return head + self.apply(history[self.summarized :])

    def apply(self, messages: list[Message]) -> list[Message]:
        if not self.elided:
            return messages
        return [Message(m.role, [self._part(p) for p in m.parts]) for m in messages]

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

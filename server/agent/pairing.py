"""Every tool call in a history gets its result, and every tool result its call.

Each provider refuses a history where an assistant's tool call is not answered by a result in
the message right after it, or a result answers no call. The loop mends its history when a step
ends however it ends (cancel, deadline, a failure); a session loaded from the store is mended
too, so a transcript written before this rule held works again.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.providers.messages import Message, ToolCallPart, ToolResultPart

INTERRUPTED = (
    "Interrupted: the turn was stopped before this tool call finished; it did not complete."
)
STORED = "Interrupted: this tool call never finished (its turn was stopped or the server stopped)."


def not_run(reason: str) -> str:
    return f"Not run: {reason}."


@dataclass
class Mended:
    """What `mend` changed: the calls it answered and where it inserted result messages."""

    calls: list[ToolCallPart]
    inserted: list[int]
    first_change: int | None


def mend(history: list[Message], why: str, *, start: int = 0) -> Mended:
    """Answer every unanswered call from `history[start:]` on with an error result saying `why`,
    and drop results that answer no call; `history` is changed in place."""
    mended = Mended([], [], None)
    i = start
    while i < len(history):
        message = history[i]
        if message.role == "tool" and not _answers(history, i):
            _note(mended, i)
            del history[i]
            continue
        calls = message.tool_calls if message.role == "assistant" else []
        if calls:
            _answer(history, i, calls, why, mended)
            i += 1
        i += 1
    return mended


def _answers(history: list[Message], i: int) -> bool:
    return i > 0 and history[i - 1].role == "assistant" and bool(history[i - 1].tool_calls)


def _answer(
    history: list[Message], i: int, calls: list[ToolCallPart], why: str, mended: Mended
) -> None:
    after = history[i + 1] if i + 1 < len(history) else None
    if after is None or after.role != "tool":
        after = Message("tool", [])
        history.insert(i + 1, after)
        mended.inserted.append(i + 1)
        _note(mended, i + 1)
    ids = {c.id for c in calls}
    by_id = {p.tool_call_id: p for p in after.parts if isinstance(p, ToolResultPart)}
    missing = [c for c in calls if c.id not in by_id]
    if missing or len(by_id) != len(after.parts) or any(k not in ids for k in by_id):
        _note(mended, i + 1)
    mended.calls.extend(missing)
    for call in missing:
        by_id[call.id] = ToolResultPart(call.id, call.name, why, is_error=True)
    after.parts = [by_id[c.id] for c in calls]


def _note(mended: Mended, index: int) -> None:
    if mended.first_change is None or index < mended.first_change:
        mended.first_change = index

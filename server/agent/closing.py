"""Closing what a step opened, however the step ends.

`ClosingSink` stands between the loop and the turn's sink and remembers the tool-call cards
announced and not yet closed. When a step ends (normally, cancelled, past its deadline, or by
an error), `end_step` closes each open card with a `failed` update saying why and mends the
history, so the client sees every card closed and the next model call gets a valid history; a
model call an error ended still counts the usage it reported.

It also remembers the turn's edits that were refused or failed and not made since: the step
that answers without calling a tool gets a `Not done:` line for each, worded from the tool's
result, so no answer passes a refused or failed edit off as done, whatever the model says.
"""

from __future__ import annotations

import anyio

from protocol.updates import (
    AgentMessageChunk,
    SessionUpdateKind,
    StepFinish,
    ToolCall,
    ToolCallUpdate,
)
from protocol.updates import Usage as WireUsage
from server.agent import pairing
from server.agent.state import AgentSession
from server.providers.messages import Message, ProviderError, TextPart, Usage
from server.turn import ForwardingSink, TurnSink

CLOSED = ("completed", "failed", "denied")
EDITS = ("edit", "delete", "move")


class ClosingSink(ForwardingSink):
    """A turn sink that tracks open tool-call cards of its own loop (not nested subagent ones)."""

    def __init__(self, inner: TurnSink):
        super().__init__(inner)
        self.open: dict[str, None] = {}
        self.steps = 0
        self.edits: dict[str, tuple[str, str]] = {}
        """Edit calls announced and not yet closed: id -> (tool name, path)."""
        self.undone: dict[str, str] = {}
        """Path -> why its last edit was not made."""

    def emit(self, update: SessionUpdateKind) -> None:
        if isinstance(update, StepFinish):
            self.steps += 1
        if isinstance(update, ToolCall | ToolCallUpdate) and not update.parent_tool_call_id:
            if isinstance(update, ToolCall):
                self.open[update.tool_call_id] = None
                if update.tool_kind in EDITS:
                    self.edits[update.tool_call_id] = (update.name, _path(update))
            elif update.status in CLOSED:
                self.open.pop(update.tool_call_id, None)
                self._settle(update)
        self.inner.emit(update)

    def _settle(self, update: ToolCallUpdate) -> None:
        name, path = self.edits.pop(update.tool_call_id, ("", ""))
        if not name:
            return
        if update.status == "completed":
            self.undone.pop(path, None)
            return
        how = "was refused" if update.status == "denied" else "failed"
        what = f"{name} {path}" if path else name
        self.undone[path] = f"{what} {how} ({_first_sentence(update.error)})"

    def close_open(self, why: str) -> None:
        for call_id in list(self.open):
            self.emit(ToolCallUpdate(tool_call_id=call_id, status="failed", error=why))


def reason(exc: BaseException | None) -> str:
    """What an interrupted or unrun tool call is told, from how its step ended."""
    if exc is None:
        return pairing.not_run("the step ended before this call ran")
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return pairing.INTERRUPTED
    return pairing.not_run(f"the turn failed ({str(exc) or type(exc).__name__})")


def end_step(session: AgentSession, sink: ClosingSink, start: int, exc: BaseException | None):
    """Every call the step announced is closed on the wire and answered in the history."""
    why = reason(exc)
    pairing.mend(session.history, why, start=start)
    sink.close_open(why)
    if isinstance(exc, ProviderError) and exc.usage is not None and exc.usage != Usage():
        bill_failed_call(session, sink, exc.usage)
    if exc is None:
        note_undone(session, sink, start)


def note_undone(session: AgentSession, sink: ClosingSink, start: int) -> None:
    """An answer (a step that called no tool) after edits that were not made says so."""
    step = session.history[start:]
    if not sink.undone or any(m.tool_calls for m in step if m.role == "assistant"):
        return
    said = step[-1] if step and step[-1].role == "assistant" else None
    note = "\n".join(f"Not done: {line}" for line in sink.undone.values())
    sink.undone.clear()
    if said is not None and said.text.strip():
        note = "\n\n" + note
    sink.emit(AgentMessageChunk(text=note))
    if said is None:
        session.history.append(Message("assistant", [TextPart(note)]))
    elif said.parts and isinstance(said.parts[-1], TextPart):
        said.parts[-1] = TextPart(said.parts[-1].text + note)
    else:
        said.parts.append(TextPart(note))


def _path(call: ToolCall) -> str:
    path = call.input.get("path") or call.input.get("file_path")
    if isinstance(path, str) and path:
        return path
    return call.locations[0].path if call.locations else ""


def _first_sentence(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    line = lines[0] if lines else "no reason given"
    end = line.find(". ")
    return (line[: end + 1] if end >= 0 else line)[:300]


def bill_failed_call(session: AgentSession, sink: ClosingSink, usage: Usage) -> None:
    """A model call an error ended after it reported usage (every attempt's, when retried) is
    billed all the same: its step finishes with reason `error`, so the turn counts it."""
    session.turn_usage += usage
    session.account(usage)
    wire = WireUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    sink.emit(StepFinish(step=sink.steps + 1, finish_reason="error", usage=wire))

"""Closing what a step opened, however the step ends.

`ClosingSink` stands between the loop and the turn's sink and remembers the tool-call cards
announced and not yet closed. When a step ends (normally, cancelled, past its deadline, or by
an error), `end_step` closes each open card with a `failed` update saying why and mends the
history, so the client sees every card closed and the next model call gets a valid history; a
model call an error ended still counts the usage it reported.
"""

from __future__ import annotations

import anyio

from protocol.updates import SessionUpdateKind, StepFinish, ToolCall, ToolCallUpdate
from protocol.updates import Usage as WireUsage
from server.agent import pairing
from server.agent.state import AgentSession
from server.providers.messages import ProviderError, Usage
from server.turn import ForwardingSink, TurnSink

CLOSED = ("completed", "failed", "denied")


class ClosingSink(ForwardingSink):
    """A turn sink that tracks open tool-call cards of its own loop (not nested subagent ones)."""

    def __init__(self, inner: TurnSink):
        super().__init__(inner)
        self.open: dict[str, None] = {}
        self.steps = 0

    def emit(self, update: SessionUpdateKind) -> None:
        if isinstance(update, StepFinish):
            self.steps += 1
        if isinstance(update, ToolCall | ToolCallUpdate) and not update.parent_tool_call_id:
            if isinstance(update, ToolCall):
                self.open[update.tool_call_id] = None
            elif update.status in CLOSED:
                self.open.pop(update.tool_call_id, None)
        self.inner.emit(update)

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

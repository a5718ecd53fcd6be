"""The agent loop: call the model, stream what it says, run the tools it asks for, repeat.

It ends when the model answers without tool calls, at the step limit, or when the session
service cancels it (user cancel, deadline). History stays valid for the next turn either way:
partial text is kept and unfinished tool calls get an "interrupted" result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    StepFinish,
    UserMessageChunk,
)
from protocol.updates import Usage as WireUsage
from server.agent.context import git_state, system_prompt, turn_context
from server.agent.tool_calls import announce, run_tool_calls
from server.engines.base import TurnOutcome, TurnSink
from server.providers.messages import (
    Finish,
    Message,
    ModelRequest,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCallPart,
    ToolCallReady,
    Usage,
)

if TYPE_CHECKING:
    from server.engines.native import NativeSession

STOP_REASONS = {"end_turn": "end_turn", "max_tokens": "max_tokens", "refusal": "refusal"}


def wire_usage(usage: Usage) -> WireUsage:
    return WireUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )


async def run_turn(session: NativeSession, user: Message, sink: TurnSink) -> TurnOutcome:
    session.history.append(user)
    session.tool_ctx.sink = sink
    git = await anyio.to_thread.run_sync(git_state, session.spec.cwd)
    context = turn_context(session.spec.cwd, session.spec.session_id, git)
    total = Usage()
    for step in range(1, session.max_steps + 1):
        take_steers(session, sink)
        request = ModelRequest(
            model=session.model,
            system=system_prompt(session.spec.cwd),
            messages=[*session.history, context],
            tools=session.tool_specs(),
            options=session.call_options(),
        )
        finish = await stream_reply(session, request, sink)
        total += finish.usage
        calls = session.history[-1].tool_calls if session.history[-1].role == "assistant" else []
        if calls:
            results = await run_tool_calls(session, calls, sink)
            session.history.append(Message("tool", list(results)))
        sink.emit(
            StepFinish(step=step, finish_reason=finish.reason, usage=wire_usage(finish.usage))
        )
        if not calls:
            return TurnOutcome(STOP_REASONS.get(finish.reason, "end_turn"), total)
    return TurnOutcome("max_turn_requests", total)


def take_steers(session: NativeSession, sink: TurnSink) -> None:
    while session.steers:
        text = session.steers.pop(0)
        session.history.append(Message("user", [TextPart(text)]))
        sink.emit(UserMessageChunk(text=text))


async def stream_reply(session: NativeSession, request: ModelRequest, sink: TurnSink) -> Finish:
    """Stream one model call into the history; the reply is recorded even when interrupted."""
    text: list[str] = []
    thinking: list[str] = []
    signature: str | None = None
    calls: list[ToolCallPart] = []
    finish = Finish("other", Usage())
    finished = False
    try:
        async for event in session.provider().stream(request):
            if isinstance(event, TextDelta):
                text.append(event.text)
                sink.emit(AgentMessageChunk(text=event.text))
            elif isinstance(event, ThinkingDelta):
                thinking.append(event.text)
                signature = event.signature or signature
                if event.text:
                    sink.emit(AgentThoughtChunk(text=event.text))
            elif isinstance(event, ToolCallReady):
                calls.append(event.call)
                announce(session, event.call, sink)
            elif isinstance(event, Finish):
                finish = event
        finished = True
    finally:
        # An interrupted reply keeps its text but not its tool calls: they never ran.
        parts: list = []
        if thinking:
            parts.append(ThinkingPart("".join(thinking), signature))
        if text:
            parts.append(TextPart("".join(text)))
        if finished:
            parts.extend(calls)
        if parts:
            session.history.append(Message("assistant", parts))
    return finish

"""The agent loop: call the model, stream what it says, run the tools it asks for, repeat.

It ends when the model answers without tool calls (and no steer or finished background
subagent's report is waiting), at the step limit, or when the session service cancels it (user cancel, deadline).
History stays valid for the next turn either way: partial text is kept, and when a step ends
however it ends, `closing.end_step` closes every tool-call card it announced and answers every
unanswered call with an "interrupted" or "not run" result. Subagents run this same loop with their own session.

Before each call, queued steers join the history, `prepare_call` settles the model and builds
the ephemeral turn context, and compaction fits what is sent into the context window. A
transient provider failure restarts the call (`StreamRestart`); what the failed attempt
streamed is discarded, never written to the history, and the client is told with a
`stream_retry` update.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    StepFinish,
    StopReason,
    StreamRetry,
    ToolCallUpdate,
    UserMessageChunk,
)
from protocol.updates import Usage as WireUsage
from server.agent import compaction
from server.agent.closing import ClosingSink, end_step
from server.agent.context import prepare_call
from server.agent.hooks import Hooks, session_hooks
from server.agent.state import AgentSession
from server.agent.tool_calls import announce, observing_only, run_tool_calls
from server.providers.messages import (
    Finish,
    ImagePart,
    Message,
    ModelRequest,
    Part,
    ReplyParts,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ToolCallPart,
    ToolCallReady,
    Usage,
)
from server.providers.retry import StreamRestart
from server.turn import TurnOutcome, TurnSink

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}
DISCARDED = "The model call was interrupted and is being retried; this call was not run."


def wire_usage(usage: Usage) -> WireUsage:
    return WireUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )


async def run_turn(session: AgentSession, user: Message, sink: TurnSink) -> TurnOutcome:
    # Routing first: a prompt whose image no model can read fails before touching the history.
    session.route_vision(sink, new_images=any(isinstance(p, ImagePart) for p in user.parts))
    hooks = session_hooks(session) if main_agent(session) else None
    if hooks is not None:
        user, refused = await prompt_hooks(hooks, session, user)
        if refused is not None:
            session.end_vision()
            sink.emit(AgentMessageChunk(text=refused))
            return TurnOutcome("end_turn", Usage())
    session.history.append(user)
    sink = ClosingSink(sink)
    session.tool_ctx.sink = sink
    session.turn_usage = Usage()
    session.plan_asked = False
    session.seen.clear()
    try:
        async with session.background.running(sink.turn_id):
            stop = await run_steps(session, sink)
    finally:
        session.end_vision()
    return TurnOutcome(stop, session.turn_usage)


async def run_steps(session: AgentSession, sink: ClosingSink) -> StopReason:
    continued = False  # a Stop hook kept this turn going
    for step in range(1, session.max_steps + 1):
        start = len(session.history)
        try:
            finish, calls = await run_step(session, sink)
        except BaseException as exc:
            end_step(session, sink, start, exc)
            raise
        end_step(session, sink, start, None)
        sink.emit(
            StepFinish(step=step, finish_reason=finish.reason, usage=wire_usage(finish.usage))
        )
        if not calls and not await more_input(session, sink):
            if await stop_blocked(session, sink, continued=continued):
                continued = True
                continue
            return STOP_REASONS.get(finish.reason, "end_turn")
    return "max_turn_requests"


async def prompt_hooks(
    hooks: Hooks, session: AgentSession, user: Message
) -> tuple[Message, str | None]:
    """SessionStart (before a session's first prompt) and UserPromptSubmit: the prompt with
    the context they add, or the reason a hook refused it (the prompt is then not kept)."""
    added: list[str] = []
    if not session.history:
        started = await hooks.run("SessionStart", {"source": "startup"})
        added += started.context
    prompt = "\n".join(p.text for p in user.parts if isinstance(p, TextPart))
    verdict = await hooks.run("UserPromptSubmit", {"prompt": prompt})
    if verdict.block or verdict.stop:
        return user, f"A UserPromptSubmit hook blocked the prompt: {verdict.block or verdict.stop}"
    added += verdict.context
    if not added:
        return user, None
    return Message(user.role, [*user.parts, TextPart("\n\n".join(added))]), None


def main_agent(session: AgentSession) -> bool:
    """Prompt and Stop hooks are for the user's own turns, not a subagent's."""
    return session.delegation is None or not session.delegation.depth


async def stop_blocked(session: AgentSession, sink: TurnSink, *, continued: bool) -> bool:
    """A Stop hook that blocks the end of the turn: its reason becomes the model's next input."""
    hooks = session_hooks(session) if main_agent(session) else None
    if hooks is None:
        return False
    verdict = await hooks.run("Stop", {"stop_hook_active": continued})
    if not verdict.block or verdict.stop:
        return False
    text = f"A Stop hook kept the turn going: {verdict.block}"
    session.history.append(Message("user", [TextPart(text)]))
    sink.emit(UserMessageChunk(text=text))
    return True


async def run_step(session: AgentSession, sink: TurnSink) -> tuple[Finish, list[ToolCallPart]]:
    """One model call and the tool calls it asked for; `end_step` closes what it leaves open."""
    take_steers(session, sink)
    if session.background.host is not None:
        take_reports(session, sink)
    context = await prepare_call(session, sink)
    compacting, request = await compaction.fit(session, context, sink)
    session.turn_usage += compacting
    finish = await stream_reply(session, request, sink)
    session.turn_usage += finish.usage
    session.account(finish.usage)
    calls = session.history[-1].tool_calls if session.history[-1].role == "assistant" else []
    if calls:
        await run_tool_calls(session, calls, sink)
        if not observing_only(session, calls):
            session.seen.clear()
    return finish, calls


async def more_input(session: AgentSession, sink: TurnSink) -> bool:
    """A steer that arrived late, or reports of background subagents, get a call of their own.
    Hosted background subagents still running do not hold the turn: they report later."""
    if session.steers:
        return True
    if session.background.host is not None:
        return session.background.pending()
    return await session.background.report(session.history)


def take_reports(session: AgentSession, sink: TurnSink) -> None:
    """Finished background subagents' reports join the history as a message, shown to the
    client as such, with each one's final `subagent` update."""
    taken = session.background.take()
    if taken is None:
        return
    text, finals = taken
    session.seen.clear()  # what the subagents did
    session.history.append(Message("user", [TextPart(text)]))
    sink.emit(UserMessageChunk(text=text, origin="report"))
    for update in finals:
        sink.emit(update)


def take_steers(session: AgentSession, sink: TurnSink) -> None:
    while session.steers:
        text = session.steers.pop(0)
        session.history.append(Message("user", [TextPart(text)]))
        sink.emit(UserMessageChunk(text=text))


@dataclass
class Reply:
    """One streamed reply as it accumulates."""

    content: ReplyParts = field(default_factory=ReplyParts)
    calls: list[ToolCallPart] = field(default_factory=list)

    def message(self, *, finished: bool) -> Message | None:
        """An interrupted reply keeps its text but not its tool calls: they never ran."""
        parts: list[Part] = self.content.parts()
        if finished:
            parts.extend(self.calls)
        return Message("assistant", parts) if parts else None


async def stream_reply(session: AgentSession, request: ModelRequest, sink: TurnSink) -> Finish:
    """Stream one model call into the history; the reply is recorded even when interrupted."""
    reply = Reply()
    finish = Finish("other", Usage())
    failed = Usage()  # what failed attempts reported: billed, so counted with the step
    finished = False
    try:
        async for event in session.stream(request):
            if isinstance(event, StreamRestart):
                discard(reply, event, sink)
                reply = Reply()
                failed += event.usage or Usage()
            elif isinstance(event, TextDelta):
                reply.content.add(event)
                sink.emit(AgentMessageChunk(text=event.text))
            elif isinstance(event, ThinkingDelta):
                reply.content.add(event)
                if event.text:
                    sink.emit(AgentThoughtChunk(text=event.text))
            elif isinstance(event, ToolCallReady):
                reply.calls.append(event.call)
                announce(session, event.call, sink)
            elif isinstance(event, Finish):
                finish = event
        finished = True
    finally:
        message = reply.message(finished=finished)
        if message is not None:
            session.history.append(message)
    return Finish(finish.reason, finish.usage + failed)


def discard(reply: Reply, restart: StreamRestart, sink: TurnSink) -> None:
    """Close the cards of tool calls the failed attempt announced, then tell the client."""
    for call in reply.calls:
        sink.emit(ToolCallUpdate(tool_call_id=call.id, status="failed", error=DISCARDED))
    sink.emit(StreamRetry(attempt=restart.attempt, delay=restart.delay, error=restart.error))

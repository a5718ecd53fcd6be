"""Prompt commands, handled before the loop so they work in every front door: `/model <id>
[text]` switches the model, `/todo` shows the todo list and `/todo clear` empties it,
`/<skill> [args]` runs a user-invocable skill."""

from __future__ import annotations

import anyio

from protocol.updates import AgentMessageChunk, Plan
from server.agent.state import AgentSession
from server.providers import images
from server.providers.messages import ImagePart, Message
from server.skills import activate, expand_command, parse_command
from server.turn import TurnSink


async def prompt_message(
    session: AgentSession,
    text: str,
    pictures: list[ImagePart],
    images_first: bool,
    sink: TurnSink,
) -> Message | None:
    """The user message the loop runs, after the prompt's commands; None when a command was
    all there was to do. A model that cannot be used raises `ProviderConfigError`."""
    rest = model_command(session, text, sink)
    if rest is not None and todo_command(session, rest, sink):
        rest = None
    if rest is None and not pictures:
        return None
    text = rest or ""
    expanded = await anyio.to_thread.run_sync(expand_command, text, session.skills)
    if expanded:
        text, skill = expanded
        activate(skill, session.tool_ctx.state)
    return Message("user", images.message_parts(text, pictures, images_first=images_first))


def model_command(session: AgentSession, text: str, sink: TurnSink) -> str | None:
    """`/model <id> [prompt]` switches models; returns the prompt left to run (None: none)."""
    command = parse_command(text)
    if command is None or command[0].lower() != "model":
        return text
    words = command[1].split(maxsplit=1)
    if words:
        session.switch_model(words[0], reason="/model")
        if len(words) > 1:
            return words[1]
        session.announce_switch(sink)
    sink.emit(AgentMessageChunk(text=f"Model: {session.model}. Switch with /model <id>."))
    return None


def todo_command(session: AgentSession, text: str, sink: TurnSink) -> bool:
    """`/todo` lists the todo list, `/todo clear` empties it; True when the prompt was one."""
    command = parse_command(text)
    if command is None or command[0].lower() != "todo":
        return False
    state = session.tool_ctx.state
    argument = command[1].strip().lower()
    if argument == "clear":
        state["todos"] = []
        state["todoRevision"] = state.get("todoRevision", 0) + 1
        sink.emit(Plan(entries=[]))
        sink.emit(AgentMessageChunk(text="Todo list cleared."))
        return True
    if argument:
        sink.emit(AgentMessageChunk(text="Usage: /todo (show the list) or /todo clear."))
        return True
    todos = state.get("todos") or []
    lines = [f"- [{t['status']}] {t['content']}" for t in todos]
    sink.emit(AgentMessageChunk(text="\n".join(["Todo list:", *lines]) if lines else "No todos."))
    return True

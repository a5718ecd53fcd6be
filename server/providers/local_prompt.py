"""What the local model reads: a compact system prompt, worked examples, and the conversation
in plain chat turns, trimmed to its small context window.

A 1.5B model follows a short prompt better than the agent's full one, and every prompt token
costs time on a CPU (about 75 tokens/s on two cores). So the system prompt is rebuilt here from
the kinds of task the offered tools allow (`local_plan`); calls are written as the steps the
model itself took, and tool results as plain text in a user turn (`local_results`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from server.providers import local_examples, local_plan, local_results
from server.providers.messages import (
    ImagePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    is_turn_context,
)

SYSTEM = """\
You are agentls, a coding assistant working in the user's project. Answer general \
programming questions yourself. You cannot see the project's files: to answer about them, \
take a task below and answer from its result. Never guess a file's name or contents.

# Tasks

Reply with one JSON object. To look at the project or change it:
{tasks}
To answer the user: {{"answer": <text>}}. State only the names, lines and numbers that the \
results (in <tool_response></tool_response> tags) show; when they do not show what was asked, \
say what you found and that you could not find the rest.

After an edit task's file is shown, reply {{"new_line": <the line as it must become>, \
"replaces": <the line of the file it replaces>}} or {{"append": <a line to add at its end>}}."""
NUDGE = (
    "You already did that and its result is above. Do not do it again: answer now with "
    '{"answer": ...}.'
)
NUDGE_OTHER = "You already did that and it did not work. Take a different task."
NUDGE_EXISTS = "{path} already exists: to change it, take an edit task, which keeps its lines."
UNCHANGED = "I could not work out which line of {path} to change, or how."
NUDGE_SAME = (
    'That line would not change. Write "new_line" as the line must become, and pick in '
    '"replaces" the line that the request changes.'
)
NUDGE_EXAMPLE = (
    '"{text}" comes from the worked example, not from this request. Take the task this '
    "request needs, or answer with what the results above show."
)
RESULT_OPEN, RESULT_CLOSE = "<tool_response>", "</tool_response>"
OMITTED = "[result omitted to fit the context window]"
STUB = f"{RESULT_OPEN}\n{OMITTED}\n{RESULT_CLOSE}"


@dataclass(frozen=True)
class Budget:
    """Limits in characters (about 3 per token for code and English alike, rounded down)."""

    window_chars: int
    result_chars: int = 1500


def system_prompt(tools: list[ToolSpec], *, instructions: str = "", limit: int = 2000) -> str:
    """The same for every session with the same tools and instructions (no path, no date), so
    llama.cpp reuses the prompt it already read for the previous call. Instructions longer than
    `limit` characters are cut: the window is small."""
    text = SYSTEM.format(tasks=local_plan.describe(local_plan.offered(tools)))
    if not instructions:
        return text
    if len(instructions) > limit:
        instructions = instructions[:limit] + "\n[... instructions cut to fit the context window]"
    return f"{text}\n\n# Instructions from the user\n\n{instructions}"


def example(tools: list[ToolSpec]) -> list[dict[str, str]]:
    """Worked exchanges, which the model copies more faithfully than any instruction: one per
    kind of task a user asks first, each in a project unlike any real one (`local_examples`),
    only those whose tools are offered."""
    kinds = {k.name for k in local_plan.offered(tools)}
    if "read" not in kinds:
        return []
    turns: list[dict[str, str]] = []
    for shot in local_examples.SHOTS:
        if all(kind in kinds for kind in shot.kinds):
            turns += _shot(shot)
    return turns


def _shot(shot: local_examples.Shot) -> list[dict[str, str]]:
    turns = [{"role": "user", "content": shot.request}]
    for step, (tool, arguments, output) in shot.steps:
        turns.append({"role": "assistant", "content": json.dumps(step)})
        error = output.startswith("error: ")
        body = output if error else local_results.render(tool, arguments, output)
        turns.append({"role": "user", "content": f"{RESULT_OPEN}\n{body}\n{RESULT_CLOSE}"})
    turns.append({"role": "assistant", "content": json.dumps({"answer": shot.answer})})
    return turns


def workspace(messages: list[Message]) -> str:
    """The cwd named by the turn context message, if there is one."""
    for message in reversed(messages):
        if is_turn_context(message):
            match = re.search(r"^cwd: (.+)$", message.text, re.MULTILINE)
            return match.group(1) if match else ""
    return ""


def conversation(messages: list[Message], budget: Budget) -> list[dict[str, str]]:
    """The history as alternating chat turns, the turn context left out (the tools resolve
    paths against the workspace themselves), tool results capped."""
    cwd = workspace(messages)
    calls = {c.id: c for m in messages for c in m.tool_calls}
    turns: list[dict[str, str]] = []
    for message in messages:
        if is_turn_context(message):
            continue
        role, content = _render(message, calls, budget.result_chars, cwd)
        if not content:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    return turns


def _render(
    message: Message, calls: dict[str, ToolCallPart], cap: int, cwd: str
) -> tuple[str, str]:
    if message.role == "assistant":
        if message.tool_calls:
            return "assistant", "\n".join(step_text(c) for c in message.tool_calls)
        text = message.text
        return "assistant", json.dumps({"answer": text}, ensure_ascii=False) if text else ""
    pieces = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            pieces.append(tool_result(part, cap, call=calls.get(part.tool_call_id), cwd=cwd))
        elif isinstance(part, TextPart) and part.text:
            pieces.append(part.text)
        elif isinstance(part, ImagePart):
            pieces.append("[an image the local model cannot see]")
    return "user", "\n\n".join(pieces)


def step_text(call: ToolCallPart) -> str:
    """A call as the step the model took for it; a call some other model made, as a call."""
    step = local_plan.step_of(call) or {"name": call.name, "arguments": call.arguments}
    return json.dumps(step, ensure_ascii=False)


def tool_result(
    part: ToolResultPart, cap: int, *, call: ToolCallPart | None = None, cwd: str = ""
) -> str:
    """A result the way the model's chat format wraps one, read for a small model
    (`local_results`); errors say so."""
    arguments = call.arguments if call else {}
    body = local_results.render(part.name, arguments, part.content, cwd=cwd)
    body = _shorten(body, cap)
    if part.is_error:
        body = f"error: {body}"
    return f"{RESULT_OPEN}\n{body}\n{RESULT_CLOSE}"


def _shorten(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n[... {len(text) - cap} more characters not shown]"


def fit(turns: list[dict[str, str]], budget: int) -> list[dict[str, str]]:
    """Drop the oldest turns until the rest fits `budget` characters, keeping the latest user
    request and what followed it; then shorten that turn's older results if still needed."""
    start = _last_request(turns)
    while start > 0 and _size(turns) > budget:
        turns = turns[1:]
        start -= 1
    if turns and turns[0]["role"] == "assistant":
        turns = turns[1:]  # a chat opens with the user
        start -= 1
    index = max(start, 0) + 1
    while _size(turns) > budget and index < len(turns) - 1:
        if turns[index]["role"] == "user":
            turns[index] = {"role": "user", "content": STUB}
        index += 1
    return turns


def _last_request(turns: list[dict[str, str]]) -> int:
    """The index of the last user turn that is not only tool results."""
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        if turn["role"] == "user" and not turn["content"].startswith(RESULT_OPEN):
            return index
    return 0


def _size(turns: list[dict[str, str]]) -> int:
    return sum(len(t["content"]) + 16 for t in turns)


def chat(
    *,
    system: str,
    shots: list[dict[str, str]],
    turns: list[dict[str, str]],
    budget: Budget,
) -> list[dict[str, Any]]:
    """The messages for one call; the example is dropped first when the window is tight."""
    fixed = len(system) + sum(len(t["content"]) for t in shots)
    if fixed + _size(turns) > budget.window_chars:
        shots = []
        fixed = len(system)
    kept = fit(turns, budget.window_chars - fixed)
    return [{"role": "system", "content": system}, *shots, *kept]

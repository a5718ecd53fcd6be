"""What the local model reads: a compact system prompt, a worked example, and the conversation
in plain chat turns, trimmed to its small context window.

A 1.5B model follows a short prompt better than the agent's full one, and every prompt token
costs time on a CPU (about 75 tokens/s on two cores). So the system prompt is rebuilt here from
the tools offered, in the tool format the model was trained on; tool calls are written as the
JSON steps the model itself produces, and tool results as plain text in a user turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from server.providers.local_schema import describe_tools
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
call a function to list or read them, and never guess their contents.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

Reply with one JSON object: {{"name": <function-name>, "arguments": <args-json-object>}} to \
call a function, or {{"answer": <text>}} to answer the user once the function results hold \
what you need."""
NUDGE = (
    "You already called {name} with these arguments and its result is above. "
    'Do not call it again: answer now with {{"answer": ...}}.'
)
NUDGE_OTHER = (
    "You already called {name} with these arguments and it did not work. Call a different function."
)
RESULT_OPEN, RESULT_CLOSE = "<tool_response>", "</tool_response>"
LISTINGS = {"list_dir", "glob"}
LISTING_NOTE = "(names only: read a file to see what it contains)"
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
    text = SYSTEM.format(tools=describe_tools(tools))
    if not instructions:
        return text
    if len(instructions) > limit:
        instructions = instructions[:limit] + "\n[... instructions cut to fit the context window]"
    return f"{text}\n\n# Instructions from the user\n\n{instructions}"


def example(tools: list[ToolSpec], *, steps: int = 2) -> list[dict[str, str]]:
    """Worked exchanges, which the model copies more faithfully than any instruction: a general
    question answered directly; a file named, read, and answered from; with `steps=2` also a
    folder named, listed, then the file found there read (a listing shows names, not
    contents)."""
    names = {t.name for t in tools}
    if "read_file" not in names:
        return []
    direct = json.dumps({"answer": "It means the server has no resource at that URL."})
    turns = [
        {"role": "user", "content": "What does HTTP status 404 mean?"},
        {"role": "assistant", "content": direct},
    ]
    turns += _task("Read todo/monday.txt and tell me its first line.", "todo/monday.txt", [])
    if steps == 2 and "list_dir" in names:
        listing = f"path: done\nentries:\nfriday.txt\n{LISTING_NOTE}"
        turns += _task(
            "Look in the done folder and tell me the first line of the file in it.",
            "done/friday.txt",
            _exchange("list_dir", {"path": "done"}, listing),
        )
    return turns


def _task(request: str, path: str, before: list[dict[str, str]]) -> list[dict[str, str]]:
    answer = json.dumps({"answer": f'The first line of {path} is "Buy milk".'})
    return [
        {"role": "user", "content": request},
        *before,
        *_exchange("read_file", {"path": path}, "content:\n1: Buy milk\n2: Call Bob"),
        {"role": "assistant", "content": answer},
    ]


def _exchange(name: str, arguments: dict[str, Any], result: str) -> list[dict[str, str]]:
    call = json.dumps({"name": name, "arguments": arguments})
    return [
        {"role": "assistant", "content": call},
        {"role": "user", "content": f"{RESULT_OPEN}\n{result}\n{RESULT_CLOSE}"},
    ]


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
    turns: list[dict[str, str]] = []
    for message in messages:
        if is_turn_context(message):
            continue
        role, content = _render(message, budget.result_chars)
        if not content:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    return turns


def _render(message: Message, cap: int) -> tuple[str, str]:
    if message.role == "assistant":
        calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
        if calls:
            return "assistant", "\n".join(_call_json(c) for c in calls)
        text = message.text
        return "assistant", json.dumps({"answer": text}, ensure_ascii=False) if text else ""
    pieces = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            pieces.append(tool_result(part, cap))
        elif isinstance(part, TextPart) and part.text:
            pieces.append(part.text)
        elif isinstance(part, ImagePart):
            pieces.append("[an image the local model cannot see]")
    return "user", "\n\n".join(pieces)


def _call_json(call: ToolCallPart) -> str:
    return json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)


def tool_result(part: ToolResultPart, cap: int) -> str:
    """A result the way the model's chat format wraps one; errors say so, and a listing says
    that it holds names only (a small model otherwise answers about contents it never read)."""
    body = _shorten(plain(part.content), cap)
    if part.is_error:
        body = f"error: {body}"
    elif part.name in LISTINGS:
        body += f"\n{LISTING_NOTE}"
    return f"{RESULT_OPEN}\n{body}\n{RESULT_CLOSE}"


def plain(content: str) -> str:
    """A JSON object result as `key: value` lines, multi-line text kept as it is: easier for a
    small model to read than escaped JSON."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if not isinstance(value, dict):
        return content
    lines = []
    for key, item in value.items():
        if isinstance(item, str) and "\n" in item:
            lines.append(f"{key}:\n{item}")
        elif isinstance(item, list) and all(isinstance(v, str) for v in item):
            lines.append(f"{key}:\n" + "\n".join(item) if item else f"{key}: (none)")
        else:
            text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            lines.append(f"{key}: {text}")
    return "\n".join(lines)


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

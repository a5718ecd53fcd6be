"""The peer suite's task as the fake model plays it, on whichever wire the agent speaks
(Anthropic messages, OpenAI chat completions, OpenAI Responses): asked TASK, it reads
notes.txt with one call of the agent's own file tool (or shell, for Codex), then answers;
asked a WARM prompt, it answers at once (one model call).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.testing.fake_llm import FakeToolCall, Reply

TASK = "What is the first line of notes.txt?"
ANSWER = "The first line is: alpha"
WARM = "Warm turn"


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p for p in content or [] if isinstance(p, dict)]
    return " ".join(str(p.get("text", "")) for p in parts if "text" in p)


def conversation(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The request as ("user", text) and ("result", "") entries in order, on any of the wires."""
    entries: list[tuple[str, str]] = []
    for item in body.get("messages") or body.get("input") or []:
        kind, role = item.get("type", "message"), item.get("role")
        if kind == "function_call_output" or role == "tool":
            entries.append(("result", ""))
        elif kind == "message" and role == "user":
            content = item.get("content")
            blocks = content if isinstance(content, list) else []
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                entries.append(("result", ""))
            if text := _texts(content):
                entries.append(("user", text))
    return entries


def _tool_names(body: dict[str, Any]) -> set[str]:
    tools = body.get("tools") or []
    return {str(t.get("name") or (t.get("function") or {}).get("name")) for t in tools}


def read_call(names: set[str], ws: Path) -> FakeToolCall:
    """Reading notes.txt in the vocabulary of the agent asking."""
    if "read_file" in names:
        return FakeToolCall("read_file", {"path": "notes.txt"})
    if "exec_command" in names:
        return FakeToolCall("exec_command", {"cmd": "cat notes.txt"})
    read = next((n for n in sorted(names) if n == "Read" or n.endswith("__Read")), None)
    if read is not None:
        return FakeToolCall(read, {"file_path": str(ws / "notes.txt")})
    raise ValueError(f"no file tool among {sorted(names)}")


def replies(
    ws: Path, seen: list[tuple[float, int]] | None = None
) -> Callable[[dict[str, Any]], Reply]:
    """The fake's answer to each request; `seen` collects when each agent request (one with
    tools) arrived and its size in bytes."""

    def reply(body: dict[str, Any]) -> Reply:
        names = _tool_names(body)
        if not names:
            return Reply(text="ok")  # side requests (titles, summaries)
        if seen is not None:
            seen.append((time.perf_counter(), len(json.dumps(body))))
        entries = conversation(body)
        asked = max(
            (
                i
                for i, (kind, text) in enumerate(entries)
                if kind == "user" and (TASK in text or WARM in text)
            ),
            default=None,
        )
        if asked is None:
            raise ValueError("the request carries neither the task nor a warm prompt")
        if WARM in entries[asked][1]:
            return Reply(text="Warm answer.")
        if any(kind == "result" for kind, _ in entries[asked:]):
            return Reply(text=ANSWER)
        return Reply(tool_calls=[read_call(names, ws)])

    return reply

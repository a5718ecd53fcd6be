"""What the user's latest request has led to so far: its text, the calls made since and their
results. The local provider decides each step from it (look first, follow an edit's read, stop
repeating) and grounds the answer in it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from server.providers import local_plan, local_results
from server.providers.local_ground import Evidence
from server.providers.messages import Message, ToolCallPart, ToolResultPart, is_turn_context

_PROJECT_WORDS = re.compile(
    r"\b(files?|folders?|director(y|ies)|project|repo|repository|codebase|workspace|modules?|"
    r"defined|defines|definition|declared|mentions?|grep|search|line \d+|lines)\b",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(r"\b([a-z][a-z0-9]*_[a-z0-9_]+|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z]{2,}_\w+)\b")
_NUMBERED = re.compile(r"^\d+: ?(.*)$")
WRITES = ("edit_file", "write_file")


@dataclass
class Turn:
    request: str = ""
    cwd: str = ""
    calls: list[ToolCallPart] = field(default_factory=list)
    results: dict[str, ToolResultPart] = field(default_factory=dict)

    @property
    def looked(self) -> bool:
        """Whether a call has succeeded since the request."""
        return any(not r.is_error for r in self.results.values())

    def repeats(self, call: ToolCallPart) -> bool:
        return any(c.name == call.name and c.arguments == call.arguments for c in self.calls)

    def exists(self, path: str) -> bool:
        return bool(self.cwd and path) and (Path(self.cwd) / path).exists()

    def missed_named_path(self) -> bool:
        """Whether the last call found that a path the request names does not exist: there is
        nothing more to look at, and the answer says so."""
        if not self.calls:
            return False
        call = self.calls[-1]
        result = self.results.get(call.id)
        path = str(call.arguments.get("path", "")).strip("./")
        return bool(
            result is not None
            and result.is_error
            and "not found" in result.content.lower()
            and path
            and path in self.request
        )

    def pending_edit(self) -> tuple[str, list[str]] | None:
        """The path and lines of the file an edit task has just read, if that was the last call."""
        if not self.calls or local_plan.kind_of(self.calls[-1]) != "edit":
            return None
        call = self.calls[-1]
        result = self.results.get(call.id)
        if result is None or result.is_error:
            return None
        try:
            content = json.loads(result.content)["content"]
        except (ValueError, KeyError, TypeError):
            return None
        lines = [_NUMBERED.sub(r"\1", line) for line in str(content).split("\n")]
        return str(call.arguments.get("path", "")), lines

    def evidence(self) -> Evidence:
        """The request and the results; not the calls, which may be the model's own guesses,
        except for what a successful edit wrote (it is in the file now)."""
        texts = [self.request]
        for call in self.calls:
            result = self.results.get(call.id)
            if result is None:
                continue
            texts += [result.content, self._shown(call, result)]
            if call.name in WRITES and not result.is_error:
                texts.append(json.dumps(call.arguments, ensure_ascii=False))
        return Evidence(texts)

    def found(self) -> list[str]:
        """What each call found, one short line each."""
        lines = []
        for call in self.calls:
            result = self.results.get(call.id)
            if result is None:
                continue
            shown = self._shown(call, result).splitlines() or [""]
            if result.is_error:
                lines.append(f"{call.name} {_target(call)}: {shown[0][:120]}")
            elif call.name == "read_file":
                lines.append(shown[0])
            else:
                lines.append(" ".join(shown[:4])[:240])
        return lines

    def _shown(self, call: ToolCallPart, result: ToolResultPart) -> str:
        return local_results.render(call.name, call.arguments, result.content, cwd=self.cwd)


def _target(call: ToolCallPart) -> str:
    return str(next(iter(call.arguments.values()), "")) if call.arguments else ""


def current(messages: list[Message], cwd: str = "") -> Turn:
    """The calls and results since the latest request (the turn context does not count)."""
    turn = Turn(cwd=cwd)
    for message in reversed(messages):
        if message.role == "user" and not is_turn_context(message) and message.text:
            turn.request = message.text
            break
        turn.calls[:0] = message.tool_calls
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                turn.results[part.tool_call_id] = part
    return turn


def about_project(request: str, cwd: str) -> bool:
    """Whether the request asks about the project (names one of its files or folders, a code
    name, or speaks of files): then it is answered from a look, not from memory."""
    if _PROJECT_WORDS.search(request) or _IDENTIFIER.search(request):
        return True
    return bool(named_paths(request, cwd))


def named_paths(request: str, cwd: str) -> list[Path]:
    """The files and folders of the workspace that the request names."""
    if not cwd:
        return []
    root = Path(cwd)
    found = []
    for word in re.findall(r"[\w./-]{2,}", request):
        word = word.strip("./-")
        if word and (root / word).exists():
            found.append(root / word)
    return found


def names_a_file(request: str, cwd: str) -> bool:
    return any(path.is_file() for path in named_paths(request, cwd))

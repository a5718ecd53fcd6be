"""What the user's latest request has led to so far: its text, the calls made since and their
results. The local provider decides each step from it (look first, follow an edit's read, stop
repeating) and grounds the answer in it.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field, replace
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
_CONTENTS = re.compile(
    r"\b(lines?|read|open|quote|summari[sz]e|summary|gist|explain|says?)\b|"
    r"\bwhat does (?:the|that|this|its) (?:only )?file\b",
    re.IGNORECASE,
)
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

    def listed(self) -> list[str]:
        """The entries this turn's listings showed, as paths from the workspace (folders end
        with "/")."""
        paths = []
        for call in self.calls:
            result = self.results.get(call.id)
            if call.name != "list_dir" or result is None or result.is_error:
                continue
            try:
                entries = [str(e) for e in json.loads(result.content)["entries"]]
            except (ValueError, KeyError, TypeError):
                continue
            folder = posixpath.normpath(str(call.arguments.get("path") or ".")).strip("/")
            folder = "" if folder in ("", ".") else folder + "/"
            paths += [folder + e for e in entries if " -> " not in e]
        return list(dict.fromkeys(paths))

    def only_listed(self) -> bool:
        """Whether the calls that succeeded since the request were all listings."""
        done = [c for c in self.calls if c.id in self.results and not self.results[c.id].is_error]
        return bool(done) and all(c.name == "list_dir" for c in done)

    def resolve(self, call: ToolCallPart) -> ToolCallPart:
        """The call a small model means by its path: a name a listing showed, in the folder
        listed (after listing plans/ it asks for "roadmap.txt"); a read of a folder, or of a
        file it invents in a folder the request names, is a listing of that folder."""
        path = str(call.arguments.get("path", "")).removeprefix("./").rstrip("/")
        if not path or call.name == "write_file":
            return call
        if not self.exists(path):
            for listed in self.listed():
                if listed.rstrip("/").rsplit("/", 1)[-1] == path and self.exists(listed):
                    path = listed.rstrip("/")
                    return replace(call, arguments={**call.arguments, "path": path})
        if call.name != "read_file":
            return call
        folder = self._folder_meant(path)
        return local_plan.to_call({"task": "list", "path": folder}) if folder else call

    def _folder_meant(self, path: str) -> str | None:
        root = Path(self.cwd)
        if self.cwd and (root / path).is_dir():
            return path
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        if not parent or self.exists(path) or path in self.request:
            return None
        named = {p.resolve() for p in named_paths(self.request, self.cwd) if p.is_dir()}
        return parent if (root / parent).resolve() in named else None

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
        texts, stated, counts = [self.request], [self.request], set()
        for call in self.calls:
            result = self.results.get(call.id)
            if result is None:
                continue
            shown = self._shown(call, result)
            texts += [result.content, shown]
            stated.append(shown)
            if not result.is_error:
                counts |= local_results.countable(call.name, result.content)
            if call.name in WRITES and not result.is_error:
                texts.append(json.dumps(call.arguments, ensure_ascii=False))
                stated.append(json.dumps(call.arguments, ensure_ascii=False))
        return Evidence(texts, stated=stated, counts=counts)

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
                lines.append(shown[0] + _first_line(shown[1:]))
            else:
                lines.append(" ".join(shown[:4])[:240])
        return lines

    def _shown(self, call: ToolCallPart, result: ToolResultPart) -> str:
        return local_results.render(call.name, call.arguments, result.content, cwd=self.cwd)


def _first_line(shown: list[str]) -> str:
    """`, line N: "text"` for the first numbered line of a read that has text, else nothing."""
    for line in shown:
        number, sep, text = line.partition(": ")
        if sep and number.strip().isdigit() and text.strip():
            return f', line {number.strip()}: "{text.strip()[:120]}"'
    return ""


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


def asks_contents(request: str) -> bool:
    """Whether the request asks what a file says (its lines, a summary), which a listing of
    its folder does not show."""
    return bool(_CONTENTS.search(request))


def names_a_file(request: str, cwd: str) -> bool:
    return any(path.is_file() for path in named_paths(request, cwd))

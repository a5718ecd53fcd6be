"""The task kinds the local model chooses among, and the tool calls the project makes of them.

A 1.5B model picks a kind of task and fills in a name or a path far more reliably than it
writes a tool call: it guesses regular expressions, sets flags at random and copies the shape
of the last call it saw. So each step is one of

    {"task": "find_definition", "name": "load_csv"}   -> grep for its definition
    {"task": "edit", "path": "a.ini"}                  -> read_file, then an edit step:
    {"replace": "<one of the file's lines>", "with": "<the new line>"} or {"append": "<line>"}
    {"answer": "..."}

and the project writes the call. A call's id names its kind (`local_<kind>_<hex>`), so the
conversation can show the model its own steps again and the next step can follow an edit's read.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server.providers.local_schema import answer_branch
from server.providers.messages import ToolCallPart, ToolSpec

DEFINITION_WORDS = "def|class|function|func|fn|struct|interface|type|enum|const|let|var"
_REGEX_SPECIAL = set(r"\.+*?()|[]{}^$#&-~")
_ID = re.compile(r"local_(?P<kind>[a-z_]+)_[0-9a-f]{12}")


@dataclass(frozen=True)
class Kind:
    """One kind of task: the tool it needs, what the model fills in, the call it becomes."""

    name: str
    tool: str
    fields: tuple[str, ...]
    summary: str
    call: Callable[[dict[str, str]], dict[str, Any]]
    step: Callable[[dict[str, Any]], dict[str, str] | None]
    needs: tuple[str, ...] = ()
    """tools it needs besides `tool`"""


def escape(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def unescape(pattern: str) -> str:
    return re.sub(r"\\(.)", r"\1", pattern)


def definition_pattern(name: str) -> str:
    name = escape(name)
    return rf"\b(?:{DEFINITION_WORDS})\s+{name}\b|^\s*{name}\s*[:=]"


def _definition_name(arguments: dict[str, Any]) -> dict[str, str] | None:
    pattern = str(arguments.get("pattern", ""))
    prefix = rf"\b(?:{DEFINITION_WORDS})\s+"
    if not pattern.startswith(prefix) or r"\b|^\s*" not in pattern:
        return None
    return {"name": unescape(pattern[len(prefix) :].split(r"\b|^\s*", 1)[0])}


def _path(arguments: dict[str, Any]) -> dict[str, str]:
    return {"path": str(arguments.get("path", "."))}


KINDS = (
    Kind(
        "list",
        "list_dir",
        ("path",),
        "the files and folders in a folder",
        lambda a: {"path": a["path"] or "."},
        _path,
    ),
    Kind(
        "find_definition",
        "grep",
        ("name",),
        "where a function, class or variable is defined",
        lambda a: {"pattern": definition_pattern(a["name"])},
        _definition_name,
    ),
    Kind(
        "find_text",
        "grep",
        ("text",),
        "every line of the project that contains a word or text",
        lambda a: {"pattern": escape(a["text"]), "caseSensitive": False},
        lambda a: {"text": unescape(str(a.get("pattern", "")))},
    ),
    Kind("read", "read_file", ("path",), "a file's lines, numbered", lambda a: dict(a), _path),
    Kind(
        "edit",
        "read_file",
        ("path",),
        "change a line of a file or add one (the file is read first)",
        lambda a: dict(a),
        _path,
        needs=("edit_file",),
    ),
    Kind(
        "write",
        "write_file",
        ("path", "content"),
        "create a file with this content",
        lambda a: dict(a),
        lambda a: {"path": str(a.get("path", "")), "content": str(a.get("content", ""))},
    ),
    Kind(
        "run",
        "bash",
        ("command",),
        "run a shell command",
        lambda a: dict(a),
        lambda a: {"command": str(a.get("command", ""))},
    ),
)
BY_NAME = {k.name: k for k in KINDS}


def offered(tools: list[ToolSpec]) -> list[Kind]:
    names = {t.name for t in tools}
    return [k for k in KINDS if k.tool in names and names.issuperset(k.needs)]


def kind_branch(kind: Kind) -> dict[str, Any]:
    properties: dict[str, Any] = {"task": {"const": kind.name}}
    properties.update({f: {"type": "string", "minLength": 1} for f in kind.fields})
    return {
        "type": "object",
        "properties": properties,
        "required": ["task", *kind.fields],
        "additionalProperties": False,
    }


def plan_schema(kinds: list[Kind], *, answer: bool = True) -> dict[str, Any]:
    """One task of `kinds`, or (when `answer`, or when there is no kind) the final answer."""
    branches = [kind_branch(k) for k in kinds]
    if answer or not branches:
        branches.append(answer_branch())
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def describe(kinds: list[Kind]) -> str:
    lines = []
    for kind in kinds:
        fields = "".join(f', "{f}": <{f}>' for f in kind.fields)
        lines.append(f'{{"task": "{kind.name}"{fields}}}: {kind.summary}')
    return "\n".join(lines)


def call_id(kind: str) -> str:
    return f"local_{kind}_{uuid.uuid4().hex[:12]}"


def kind_of(call: ToolCallPart) -> str | None:
    match = _ID.fullmatch(call.id)
    return match.group("kind") if match else None


def to_call(step: dict[str, Any]) -> ToolCallPart:
    """The tool call a task step becomes."""
    kind = BY_NAME[step["task"]]
    values = {f: str(step.get(f, "")) for f in kind.fields}
    return ToolCallPart(call_id(kind.name), kind.tool, kind.call(values))


def step_of(call: ToolCallPart) -> dict[str, Any] | None:
    """The step the model took for a call the project made, as the model wrote it."""
    name = kind_of(call)
    if name in EDIT_KINDS:
        return _edit_step(name, call.arguments)
    kind = BY_NAME.get(name or "")
    if kind is None or kind.tool != call.name:
        return None
    values = kind.step(call.arguments)
    return None if values is None else {"task": kind.name, **values}


# --- the edit step, after an edit's read ------------------------------------------------

EDIT_KINDS = ("replace", "append")


def edit_schema(lines: list[str]) -> dict[str, Any]:
    """Replace one of the file's lines (exactly as it is), add a line at its end, or answer."""
    choices = list(dict.fromkeys(line for line in lines if line.strip()))
    branches: list[dict[str, Any]] = []
    if choices:
        branches.append(_object({"replace": {"enum": choices}, "with": {"type": "string"}}))
    branches.append(_object({"append": {"type": "string", "minLength": 1}}))
    branches.append(answer_branch())
    return {"anyOf": branches}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def edit_call(path: str, lines: list[str], step: dict[str, Any]) -> ToolCallPart:
    """The edit_file call for a replace or append step on the file read as `lines`."""
    if "replace" in step:
        old = str(step["replace"])
        new = _indented(str(step.get("with", "")), like=old)
        return ToolCallPart(call_id("replace"), "edit_file", _edit(path, old, new))
    added = str(step["append"]).rstrip("\n")
    tail = _unique_tail(lines)
    return ToolCallPart(call_id("append"), "edit_file", _edit(path, tail, f"{tail}\n{added}"))


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"path": path, "old_string": old, "new_string": new}


def _indented(new: str, *, like: str) -> str:
    """A small model drops the line's indentation when it rewrites it."""
    indent = like[: len(like) - len(like.lstrip())]
    return new if new.startswith(indent) or not new.strip() else indent + new.lstrip()


def _unique_tail(lines: list[str]) -> str:
    """The last lines of the file, as few as make them occur once in it."""
    text = "\n".join(lines)
    for start in range(len(lines) - 1, -1, -1):
        tail = "\n".join(lines[start:])
        if text.count(tail) == 1:
            return tail
    return text


def _edit_step(kind: str, arguments: dict[str, Any]) -> dict[str, Any]:
    old, new = str(arguments.get("old_string", "")), str(arguments.get("new_string", ""))
    if kind == "append" and new.startswith(old + "\n"):
        return {"append": new[len(old) + 1 :]}
    return {"replace": old, "with": new}

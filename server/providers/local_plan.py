"""The task kinds the local model chooses among, and the tool calls the project makes of them.

A 1.5B model picks a kind of task and fills in a name or a path far more reliably than it
writes a tool call: it guesses regular expressions, sets flags at random and copies the shape
of the last call it saw. So each step is one of

    {"task": "find_definition", "name": "load_csv"}   -> grep for its definition
    {"task": "edit", "path": "a.ini"}                  -> read_file, then an edit step:
    {"new_line": "<the new line>", "replaces": "<one of the file's lines>"} or {"append": "<line>"}
    {"answer": "..."}

and the project writes the call. A call's id names its kind (`local_<kind>_<hex>`), so the
conversation can show the model its own steps again and the next step can follow an edit's read.
"""

from __future__ import annotations

import difflib
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
    """what the task gives, as the model is told"""
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


OUTLINE_PATTERN = rf"^\s*(?:export\s+|async\s+|pub\s+)*(?:{DEFINITION_WORDS})\s+\w+"


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
        'the files and folders in a folder ("." is the top folder of the project)',
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
    Kind(
        "outline",
        "grep",
        ("path",),
        "the functions and classes a file defines, with their lines",
        lambda a: {"pattern": OUTLINE_PATTERN, "path": a["path"]},
        lambda a: _path(a) if a.get("pattern") == OUTLINE_PATTERN else None,
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


IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
PATH_KINDS = ("outline", "read", "edit", "run")
"""the kinds that look at one file the request names"""


def kind_branch(kind: Kind, *, paths: list[str] | None = None, request: str = "") -> dict[str, Any]:
    """The step of one kind; `paths`, when given, are the only paths it may take. The name a
    definition is sought by is a word of the `request` (a small model otherwise seeks one it
    makes up from the request's words), never a file name: "release.sh" is read, not sought."""
    properties: dict[str, Any] = {"task": {"const": kind.name}}
    properties.update({f: {"type": "string", "minLength": 1} for f in kind.fields})
    if kind.name == "find_definition":
        words = list(dict.fromkeys(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", request)))
        properties["name"] = {"enum": words} if words else {"type": "string", "pattern": IDENTIFIER}
    if paths and "path" in kind.fields:
        properties["path"] = {"enum": paths}
    return {
        "type": "object",
        "properties": properties,
        "required": ["task", *kind.fields],
        "additionalProperties": False,
    }


def plan_schema(
    kinds: list[Kind],
    *,
    answer: bool = True,
    paths: dict[str, list[str]] | None = None,
    request: str = "",
) -> dict[str, Any]:
    """One task of `kinds`, or (when `answer`, or when there is no kind) the final answer;
    `paths` holds, by kind, the only paths a kind may take (see `kind_branch`)."""
    branches = [kind_branch(k, paths=(paths or {}).get(k.name), request=request) for k in kinds]
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
    """Replace one of the file's lines, add a line at its end, or answer. Lines are offered
    without their indentation, which a small model does not reproduce (it is put back)."""
    choices = list(dict.fromkeys(line.strip() for line in lines if line.strip()))
    branches: list[dict[str, Any]] = []
    if choices:
        # The new line first: the line it replaces is then chosen knowing what it becomes.
        branches.append(_object({"new_line": {"type": "string"}, "replaces": {"enum": choices}}))
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


def edit_call(
    path: str, lines: list[str], step: dict[str, Any], *, request: str = ""
) -> ToolCallPart:
    """The edit_file call for a replace or append step on the file read as `lines`."""
    if "replaces" in step:
        wanted = str(step.get("new_line", ""))
        chosen = _replaced(str(step["replaces"]).strip(), wanted.strip(), lines, request)
        old = next((line for line in lines if line.strip() == chosen), chosen)
        new = _in_style(wanted, like=old)
        return ToolCallPart(call_id("replace"), "edit_file", _edit(path, old, new))
    added = str(step["append"]).rstrip("\n")
    tail = _unique_tail(lines)
    return ToolCallPart(call_id("append"), "edit_file", _edit(path, tail, f"{tail}\n{added}"))


def _replaced(chosen: str, new: str, lines: list[str], request: str) -> str:
    """The line a one-line edit replaces: the model's choice, unless it is unlike the new line
    and not named in the request while another line is much like it (a small model often
    picks a neighbour of the line it means)."""
    if chosen.lower() in request.lower() or _likeness(chosen, new) >= 0.5:
        return chosen
    best = max((line.strip() for line in lines if line.strip()), key=lambda s: _likeness(s, new))
    return best if _likeness(best, new) >= 0.6 else chosen


def _likeness(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"path": path, "old_string": old, "new_string": new}


COMMENT_MARKERS = ("#", "//", "--", ";")


def _in_style(new: str, *, like: str) -> str:
    """The new line written the way the line it replaces is: a small model drops the
    indentation and the comment marker, and swaps the kind of quotes, when it rewrites a line."""
    if not new.strip():
        return new
    body, old = new.strip(), like.strip()
    marker = next((m for m in COMMENT_MARKERS if old.startswith(m)), "")
    if marker and not body.startswith(marker):
        body = f"{marker} {body}"
    if '"' in old and "'" not in old and "'" in body and '"' not in body:
        body = body.replace("'", '"')
    return like[: len(like) - len(like.lstrip())] + body


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
    return {"new_line": new.strip(), "replaces": old.strip()}

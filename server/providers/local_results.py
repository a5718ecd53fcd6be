"""Tool results as a 1.5B model reads them: short plain lines that say what was found, with the
counts written out, and paths relative to the workspace.

Escaped JSON with absolute paths is hard for a small model to read: it misses a match in a
`matches` array, miscounts a listing and quotes the temporary folder a workspace lives in.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

LISTING_NOTE = "(names only: read a file to see what it contains)"
TABLES = (".csv", ".tsv")
"""files whose first line names the columns of the rows below it"""
_LINE = re.compile(r"^\d+: ?")


def render(name: str, arguments: dict[str, Any], content: str, *, cwd: str = "") -> str:
    """One result, by the tool that produced it; what no renderer knows goes out as `plain`."""
    if cwd:
        content = content.replace(cwd.rstrip("/\\") + "/", "").replace(cwd, ".")
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if not isinstance(value, dict):
        return content
    renderer = _RENDERERS.get(name)
    try:
        return renderer(arguments, value) if renderer else plain(value)
    except (KeyError, TypeError, ValueError):
        return plain(value)


def plain(value: dict[str, Any]) -> str:
    """A JSON object as `key: value` lines, multi-line text kept as it is."""
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


def _listing(arguments: dict[str, Any], value: dict[str, Any]) -> str:
    where = str(arguments.get("path") or ".")
    entries = [str(e) for e in value["entries"]]
    folders = [e for e in entries if e.endswith("/")]
    files = [e for e in entries if not e.endswith("/")]
    lines = [f"folder {where}: {_count(len(files), 'file')} and {_count(len(folders), 'folder')}"]
    if files:
        lines.append(f"files ({len(files)}): {', '.join(files)}")
    if folders:
        lines.append(f"folders ({len(folders)}): {', '.join(folders)}")
    if value.get("note"):
        lines.append(str(value["note"]))
    return "\n".join([*lines, LISTING_NOTE])


def _matches(_arguments: dict[str, Any], value: dict[str, Any]) -> str:
    total, files = int(value["matchCount"]), int(value["filesWithMatches"])
    if total == 0:
        return "no matches: no file contains it"
    lines = [f"{_count(total, 'match')} in {_count(files, 'file')}:"]
    for match in value["matches"]:
        lines.append(f"{match['file']}, line {match['line']}: {str(match['content']).strip()}")
    if value.get("truncated"):
        lines.append(f"[{total - len(value['matches'])} more matches not shown]")
    return "\n".join(lines)


def _file(arguments: dict[str, Any], value: dict[str, Any]) -> str:
    total, path = int(value["totalLines"]), str(arguments.get("path", "the file"))
    head = f"{path}: {_count(total, 'line')}"
    if path.lower().endswith(TABLES) and total > 1:
        head += f" (a header line and {_count(total - 1, 'row')})"
    start, end = value.get("startLine", 1), value.get("endLine", total)
    if (start, end) != (1, total) and total:
        head += f" (lines {start} to {end} shown)"
    return f"{head}\n{value['content']}" if value.get("content") else f"{head}, empty"


def _edited(arguments: dict[str, Any], value: dict[str, Any]) -> str:
    path = arguments.get("path", "the file")
    if value.get("alreadyApplied"):
        return f"no change: {path} already has the new text"
    return f"edited {path}: {_count(int(value['replacements']), 'replacement')}"


def _found(_arguments: dict[str, Any], value: dict[str, Any]) -> str:
    files = [str(f) for f in value["files"]]
    if not files:
        return "no file matches"
    return f"{_count(int(value['totalFiles']), 'file')}: {', '.join(files)}"


def countable(name: str, content: str) -> set[int]:
    """What can be counted in a result besides the counts it states: a file's lines by how
    they start (its functions, headings, list items), its non-empty lines; a listing's entries
    and its files by extension; a search's matches in each file."""
    try:
        value = json.loads(content)
        if name == "read_file":
            return _lines_counted([_LINE.sub("", x) for x in str(value["content"]).split("\n")])
        if name == "list_dir":
            return _entries_counted([str(e) for e in value["entries"]])
        if name == "grep":
            files = Counter(str(m["file"]) for m in value["matches"])
            return set(files.values())
    except (ValueError, KeyError, TypeError):
        pass
    return set()


def _lines_counted(lines: list[str]) -> set[int]:
    filled = [line.strip() for line in lines if line.strip()]
    starts = Counter(_start(line) for line in filled)
    return {len(filled), *starts.values()}


def _start(line: str) -> str:
    """The first word of a line, or its leading marks ("#", "##", "-") when it opens with them."""
    marks = re.match(r"[^\w\s]+", line)
    return marks.group(0) if marks else re.split(r"[^\w]", line, maxsplit=1)[0]


def _entries_counted(entries: list[str]) -> set[int]:
    files = [e for e in entries if not e.endswith("/")]
    kinds = Counter(e.rsplit(".", 1)[-1].lower() for e in files if "." in e.lstrip("."))
    return {len(entries), *kinds.values()}


def _count(number: int, noun: str) -> str:
    plural = noun + ("es" if noun.endswith("ch") else "s")
    return f"{number} {noun if number == 1 else plural}"


_RENDERERS = {
    "list_dir": _listing,
    "grep": _matches,
    "read_file": _file,
    "edit_file": _edited,
    "glob": _found,
}

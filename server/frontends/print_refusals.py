"""What `agentls -p` tells its user about the calls a turn had refused: one stderr line each
(what was refused, why, how to allow it) and an exit code of its own, so neither a script nor
a person takes a refused edit for a done one. The refusals are the `result` frame's
`permission_denials` (Claude Code's tool names and argument names)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REFUSED = 3
"""The exit code of a turn that completed with at least one call refused (text output)."""

EDITS = frozenset({"Edit", "Write", "EditHashed", "MultiEdit", "NotebookEdit"})
WHAT = {"Bash": "commands", "Git": "git commands", "WebFetch": "fetches"}


def exit_code(result: dict[str, Any], *, output_format: str) -> int:
    """1 for a failed turn; `REFUSED` for one that had a call refused, when its output is text
    (JSON output carries the refusals in `permission_denials`); else 0."""
    if result.get("is_error"):
        return 1
    refused = output_format == "text" and result.get("permission_denials")
    return REFUSED if refused else 0


def refusal_lines(result: dict[str, Any], *, cwd: Path, mode: str | None) -> list[str]:
    """One line per refused call of the turn, for stderr."""
    return [_line(d, cwd, mode or "default") for d in result.get("permission_denials") or []]


def _line(denial: dict[str, Any], cwd: Path, mode: str) -> str:
    name = str(denial.get("tool_name") or "a tool")
    args = denial.get("tool_input") or {}
    target = _target(args, cwd)
    what = f"{name} {target}" if target else name
    how = _how(name, args, mode)
    return f"agentls: refused {what}: {_why(name, mode)}; to allow it, run with {how}"


def _why(name: str, mode: str) -> str:
    if name in EDITS and mode == "plan":
        return "the plan permission mode makes no edits"
    if name in EDITS and mode != "default":
        return "this path always asks for approval (outside the workspace or a control file)"
    if mode == "dontAsk":
        return "the dontAsk permission mode runs only calls allowed beforehand"
    kind = "edits" if name in EDITS else WHAT.get(name, "this tool")
    return f"the {mode} permission mode asks before {kind} and -p has no one to answer"


def _target(args: dict[str, Any], cwd: Path) -> str:
    for key in ("file_path", "path", "command", "url", "pattern"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return _relative(value, cwd) if key in ("file_path", "path") else _short(value)
    return ""


def _relative(path: str, cwd: Path) -> str:
    try:
        return Path(path).relative_to(cwd).as_posix()
    except ValueError:
        return path


def _short(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    cut = len(lines) > 1 or len(lines[0]) > 80
    return f"`{lines[0][:80]}…`" if cut else f"`{lines[0]}`"


def _how(name: str, args: dict[str, Any], mode: str) -> str:
    if name in EDITS and mode in ("default", "plan"):
        return f"--permission-mode acceptEdits or --allowedTools {name}"
    if name in EDITS:
        return "--permission-mode bypassPermissions (or answer it in an editor)"
    command = args.get("command")
    if name == "Bash" and isinstance(command, str) and command.split():
        return f'--allowedTools "Bash({command.split()[0]}:*)"'
    return f"--allowedTools {name}"

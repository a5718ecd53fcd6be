"""Tool arguments under Claude Code's names: a tool announced as `Read` shows its input as Claude
Code's Read takes it (`file_path`, absolute), so hosts written for Claude Code render it; a
host's `updatedInput` comes back the other way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Our argument name -> Claude Code's, per tool (our tool names).
RENAMES: dict[str, dict[str, str]] = {
    "read_file": {"path": "file_path"},
    "write_file": {"path": "file_path"},
    "edit_file": {"path": "file_path"},
    "edit_file_hashed": {"path": "file_path"},
    "bash_output": {"jobId": "bash_id"},
    "kill_bash": {"jobId": "shell_id"},
}
ABSOLUTE = {"file_path"}
"""Claude Code's file tools take absolute paths only."""


def to_claude(tool: str, args: dict[str, Any], cwd: Path) -> dict[str, Any]:
    renames = RENAMES.get(tool, {})
    out: dict[str, Any] = {}
    for key, value in args.items():
        name = renames.get(key, key)
        if name in ABSOLUTE and isinstance(value, str) and value:
            value = str(cwd / value)  # an absolute value stays as it is
        out[name] = value
    if tool == "grep" and out.get("caseSensitive") is False:
        del out["caseSensitive"]
        out["-i"] = True
    return out


def from_claude(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    back = {theirs: ours for ours, theirs in RENAMES.get(tool, {}).items()}
    out = {back.get(key, key): value for key, value in args.items()}
    if tool == "grep" and "-i" in out:
        out["caseSensitive"] = not out.pop("-i")
    return out

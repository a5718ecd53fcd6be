"""The built-in tools' names as Claude Code clients know them (`allowedTools`, `can_use_tool`,
stream-json frames), and the config's switch for turning tools off. Data only: importing it loads
no tool."""

from __future__ import annotations

from typing import Any

# Our tool names as Claude Code clients know them (allowedTools, can_use_tool, frames).
CLAUDE_CODE_NAMES = {
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "edit_file_hashed": "EditHashed",
    "list_dir": "LS",
    "glob": "Glob",
    "grep": "Grep",
    "bash": "Bash",
    "bash_output": "BashOutput",
    "kill_bash": "KillShell",
    "git": "Git",
    "todo_write": "TodoWrite",
    "ask_user_question": "AskUserQuestion",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "task": "Task",
    "task_output": "TaskOutput",
    "skill": "Skill",
}
OUR_NAMES = {v: k for k, v in CLAUDE_CODE_NAMES.items()}


def canonical_name(name: str) -> str:
    """Our name for a tool named either way (`Read` or `read_file`)."""
    return OUR_NAMES.get(name, name)


def disallowed(config: dict[str, Any] | None) -> set[str]:
    """Our names of the tools `tools.disallowed` in the config switches off."""
    return {canonical_name(n) for n in ((config or {}).get("tools") or {}).get("disallowed", [])}

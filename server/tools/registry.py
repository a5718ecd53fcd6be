"""The built-in tool set."""

from __future__ import annotations

from collections.abc import Iterable

from .ask import AskUserQuestion
from .base import Tool
from .files import EditFile, ListDir, ReadFile, WriteFile
from .git import Git
from .hashed import EditFileHashed
from .search import Glob, Grep
from .shell import BackgroundJobs, Bash, BashOutput, KillBash
from .todo import TodoWrite


def builtin_tools(*, jobs: BackgroundJobs | None = None) -> list[Tool]:
    """One instance of each built-in tool; the shell tools share `jobs` (default: `shell.JOBS`)."""
    return [
        ReadFile(),
        WriteFile(),
        EditFile(),
        EditFileHashed(),
        ListDir(),
        Grep(),
        Glob(),
        Bash(jobs),
        BashOutput(jobs),
        KillBash(jobs),
        Git(),
        TodoWrite(),
        AskUserQuestion(),
    ]


def tools_by_name(tools: Iterable[Tool] | None = None) -> dict[str, Tool]:
    """Index tools by name (the built-in set when none are given); a duplicate name is an error."""
    index: dict[str, Tool] = {}
    for tool in builtin_tools() if tools is None else tools:
        if tool.name in index:
            raise ValueError(f"duplicate tool name: {tool.name}")
        index[tool.name] = tool
    return index

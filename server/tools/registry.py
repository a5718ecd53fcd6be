"""The built-in tool set."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .ask import AskUserQuestion
from .base import Tool
from .files import EditFile, ListDir, ReadFile, WriteFile
from .git import Git
from .hashed import EditFileHashed
from .names import disallowed
from .search import Glob, Grep
from .sessions import session_tools
from .shell import BackgroundJobs, Bash, BashOutput, KillBash
from .skill import SkillTool
from .todo import TodoWrite
from .web_fetch import web_tools

if TYPE_CHECKING:
    from server.skills import SkillCatalog
    from server.turn import SessionSearch

def builtin_tools(
    *,
    jobs: BackgroundJobs | None = None,
    config: dict[str, Any] | None = None,
    skills: SkillCatalog | None = None,
    search: SessionSearch | None = None,
) -> list[Tool]:
    """One instance of each built-in tool the config enables, minus `tools.disallowed`; the
    shell tools share `jobs` (default: `shell.JOBS`); `skill` comes with a skill catalog,
    `search_sessions` with a session search. The `task` tools are bound to their session and
    added by the engine."""
    config = config or {}
    tools: list[Tool] = [
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
        *web_tools(config),
        *session_tools(search),
        *([SkillTool(skills)] if skills is not None else []),
    ]
    off = disallowed(config)
    return [t for t in tools if t.name not in off]


def tools_by_name(tools: Iterable[Tool] | None = None) -> dict[str, Tool]:
    """Index tools by name (the built-in set when none are given); a duplicate name is an error."""
    index: dict[str, Tool] = {}
    for tool in builtin_tools() if tools is None else tools:
        if tool.name in index:
            raise ValueError(f"duplicate tool name: {tool.name}")
        index[tool.name] = tool
    return index

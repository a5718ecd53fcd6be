"""Subagent profiles: what a kind of subagent may do (tools, step cap, model, extra prompt), the
built-in ones and the user's and project's profile files (`.claude/agents`, `.agentls/agents`)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.methods import SubagentInfo, SubagentsListResult
from server.config import local_model_file
from server.skills import (
    FrontmatterError,
    SkillWarning,
    Source,
    name_list,
    optional_text,
    required_text,
    short,
    split_frontmatter,
    user_home,
    wire_warnings,
)
from server.tools.names import CLAUDE_CODE_NAMES, canonical_name

log = logging.getLogger(__name__)

SUMMARY_LIMIT = 1800
"""The longest report a subagent hands back, in characters."""

EXPLORER_TOOLS = (
    "read_file", "list_dir", "glob", "grep", "search_sessions", "web_fetch", "web_search",
)  # fmt: skip
ALL_TOOL_NAMES = (*CLAUDE_CODE_NAMES, "list_dir", "search_sessions", "kill_task")
"""What "every tool but ..." starts from for a client's agent (its MCP tools are left out)."""
DESIGN_TOOLS = (
    "read_file", "write_file", "edit_file", "edit_file_hashed", "list_dir", "glob", "grep",
    "web_fetch", "web_search",
)  # fmt: skip


@dataclass(frozen=True)
class Profile:
    """What a kind of subagent may do: its tools (None = all), step cap, model and extra prompt."""

    name: str
    description: str
    tools: tuple[str, ...] | None
    max_steps: int
    model: str | None = None
    prompt: str = ""
    source: Source = "builtin"

    def allows(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools

    def role_prompt(self, *, subagent: bool = True) -> str:
        """The system prompt section of a session running as this profile."""
        tools = "every tool" if self.tools is None else ", ".join(self.tools)
        lines = [f"## Your role: {self.name}", self.description, f"- Your tools: {tools}."]
        if subagent:
            lines += [
                "- Another agent (not the user) started you for one task. You cannot chat with "
                "the user; work on your own. Permission prompts and questions you raise reach "
                "the user through that agent.",
                "- Your final message is your whole report to that agent: what you found or "
                "changed, with file paths and line numbers, and what is left. Keep it under "
                f"{SUMMARY_LIMIT} characters.",
            ]
        extra = self.prompt.strip()
        return "\n".join(lines) + (f"\n\n{extra}" if extra else "")


BUILTIN_PROFILES = (
    Profile(
        "explorer",
        "Read-only investigation: finds where things are and how they work (files, symbols, call "
        "paths, past sessions, the web) and reports back. Cannot change anything.",
        EXPLORER_TOOLS,
        20,
    ),
    Profile(
        "executor",
        "Does a self-contained piece of work end to end with every tool (edits, shell, git, "
        "tests) and reports what it changed.",
        None,
        40,
    ),
    Profile(
        "design",
        "Writes and edits files with web research but no shell or git: designs, specs, docs, "
        "prototypes.",
        DESIGN_TOOLS,
        30,
    ),
)


# -- user profiles ------------------------------------------------------------------------------


def profile_layers(cwd: Path, home: Path) -> list[tuple[Source, Path]]:
    return [
        ("user", home / ".claude" / "agents"),
        ("user", home / ".agentls" / "agents"),
        ("project", cwd / ".claude" / "agents"),
        ("project", cwd / ".agentls" / "agents"),
    ]


def parse_profile(file: Path, source: Source) -> Profile:
    data, body = split_frontmatter(file.read_text(encoding="utf-8-sig"))
    name = optional_text(data, "name") or file.stem
    if any(c.isspace() for c in name):
        raise FrontmatterError(f"name {name!r} must be one word")
    tools = name_list(data, "tools")
    if tools is not None and "*" in tools:
        tools = None
    steps = data.get("maxTurns", 40)
    if not isinstance(steps, int) or isinstance(steps, bool) or not 1 <= steps <= 200:
        raise FrontmatterError("'maxTurns' must be a whole number from 1 to 200")
    return Profile(
        name=name,
        description=required_text(data, "description"),
        tools=None if tools is None else tuple(canonical_name(t) for t in tools),
        max_steps=steps,
        model=_model(optional_text(data, "model"), source),
        prompt=body.strip(),
        source=source,
    )


def _model(model: str | None, source: Source) -> str | None:
    """A project profile never names a GGUF file: only the user picks what the local provider
    loads into this process (the project config rule)."""
    return None if source == "project" and local_model_file(model) else model


def discover_profiles(cwd: Path, home: Path) -> tuple[list[Profile], list[SkillWarning]]:
    found = {p.name.lower(): p for p in BUILTIN_PROFILES}
    warnings: list[SkillWarning] = []
    for source, folder in profile_layers(cwd, home):
        try:
            files = sorted(p for p in folder.glob("*.md") if p.is_file())
        except OSError:
            continue
        for file in files:
            try:
                profile = parse_profile(file, source)
            except (FrontmatterError, OSError, UnicodeDecodeError) as exc:
                log.warning("subagent profile %s skipped: %s", file, exc)
                warnings.append(SkillWarning(str(file), str(exc)))
                continue
            found[profile.name.lower()] = profile
    return list(found.values()), warnings


class ProfileRegistry:
    """The subagent profiles a workspace sees: built-in ones, then user and project files,
    then those the client defined (`extra`)."""

    def __init__(self, cwd: Path, *, home: Path, extra: tuple[Profile, ...] = ()):
        self.cwd, self.home, self.extra = cwd, home, extra
        self.profiles: list[Profile] = []
        self.warnings: list[SkillWarning] = []
        self.refresh()

    def refresh(self) -> None:
        found, self.warnings = discover_profiles(self.cwd, self.home)
        named = {p.name.lower() for p in self.extra}
        self.profiles = [p for p in found if p.name.lower() not in named] + list(self.extra)

    def get(self, name: str) -> Profile | None:
        return next((p for p in self.profiles if p.name.lower() == name.strip().lower()), None)

    def names(self) -> str:
        return ", ".join(p.name for p in self.profiles)

    def summary_lines(self) -> list[str]:
        lines = ["## Subagents", "Start one with the `task` tool (`subagent_type` is the name)."]
        return lines + [f"- **{p.name}**: {short(p.description)}" for p in self.profiles]


MODEL_ALIASES = ("sonnet", "opus", "haiku", "inherit")
"""Claude Code's model aliases: a client's agent naming one runs on the session's model."""


def client_profiles(definitions: Any) -> tuple[Profile, ...]:
    """Agents a client defined (the SDKs' `agents`: name -> {description, prompt, tools?,
    disallowedTools?, model?, maxTurns?}); an entry without a description or prompt is left
    out."""
    found = []
    for name, entry in (definitions or {}).items() if isinstance(definitions, dict) else []:
        if not isinstance(entry, dict) or any(c.isspace() for c in str(name)):
            continue
        description, prompt = entry.get("description"), entry.get("prompt")
        if not isinstance(description, str) or not isinstance(prompt, str):
            continue
        tools = _names(entry.get("tools"))
        off = _names(entry.get("disallowedTools"))
        if off:
            tools = tuple(t for t in (tools or ALL_TOOL_NAMES) if t not in off)
        steps = entry.get("maxTurns")
        model = entry.get("model") if isinstance(entry.get("model"), str) else None
        found.append(
            Profile(
                name=str(name),
                description=description,
                tools=tools,
                max_steps=steps if isinstance(steps, int) and 1 <= steps <= 200 else 40,
                model=None if model in MODEL_ALIASES else model,
                prompt=prompt,
                source="user",
            )
        )
    return tuple(found)


def _names(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    names = tuple(canonical_name(v) for v in value if isinstance(v, str))
    return None if "*" in names else names


def list_subagents(cwd: Path, registry: ProfileRegistry | None = None) -> SubagentsListResult:
    """`subagents/list`: a session's registry (re-read), or a fresh one for the directory `cwd`."""
    if registry is None:
        registry = ProfileRegistry(cwd, home=user_home(os.environ))
    else:
        registry.refresh()
    return SubagentsListResult(
        subagents=[
            SubagentInfo(
                name=p.name,
                description=p.description,
                source=p.source,
                tools=None if p.tools is None else list(p.tools),
                max_steps=p.max_steps,
                model=p.model,
            )
            for p in registry.profiles
        ],
        warnings=wire_warnings(registry.warnings),
    )

"""Subagents: agents a session starts (the `task` tool) to do one job in a context of their own.

A subagent runs the same loop as its parent with a profile's tool allowlist and step cap. It
never talks to the user directly: its permission requests and questions go up through the
parent turn's sink, its progress reaches the client as `subagent` updates whose `id` is the
toolCallId of the `task` call that started it, and it returns `{summary, outputFiles}`.
Subagents nest at most `MAX_DEPTH` deep and at most `MAX_PER_TURN` run per top-level turn.
Background subagents live in the parent turn's task group: cancelling the turn cancels them, and
the turn does not end while one of them has not reported.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from protocol.methods import SubagentInfo, SubagentsListResult
from server.agent.compaction import ContextView
from server.providers.messages import Message, TextPart, Usage
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

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from server.engines.native import NativeSession

log = logging.getLogger(__name__)

MAX_DEPTH = 5
MAX_PER_TURN = 32
SUMMARY_LIMIT = 1800
TASK_TOOLS = ("task", "task_output")
Status = Literal["completed", "failed", "aborted"]

EXPLORER_TOOLS = (
    "read_file", "list_dir", "glob", "grep", "search_sessions", "web_fetch", "web_search",
)  # fmt: skip
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
    from server.tools.names import canonical_name

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
    from server.config import local_model_file

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
    """The subagent profiles a workspace sees: built-in ones, then user and project files."""

    def __init__(self, cwd: Path, *, home: Path):
        self.cwd, self.home = cwd, home
        self.profiles: list[Profile] = []
        self.warnings: list[SkillWarning] = []
        self.refresh()

    def refresh(self) -> None:
        self.profiles, self.warnings = discover_profiles(self.cwd, self.home)

    def get(self, name: str) -> Profile | None:
        return next((p for p in self.profiles if p.name.lower() == name.strip().lower()), None)

    def names(self) -> str:
        return ", ".join(p.name for p in self.profiles)

    def summary_lines(self) -> list[str]:
        lines = ["## Subagents", "Start one with the `task` tool (`subagent_type` is the name)."]
        return lines + [f"- **{p.name}**: {short(p.description)}" for p in self.profiles]


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


# -- a session's place in the tree --------------------------------------------------------------


@dataclass
class Budget:
    """Subagents started so far in one top-level turn, at any depth."""

    spawned: int = 0


@dataclass
class Delegation:
    """Which profiles a session may start, as what it runs itself, and how deep it is."""

    registry: ProfileRegistry
    profile: Profile | None = None
    """None for the user's own session."""
    depth: int = 0
    budget: Budget = field(default_factory=Budget)


@dataclass
class Report:
    """What a finished subagent hands back."""

    status: Status
    summary: str
    output_files: list[str]

    def result(self) -> dict[str, Any]:
        return {"summary": self.summary, "outputFiles": self.output_files}


class LimitError(Exception):
    """Starting one more subagent would break a limit; the message tells the model what to do."""


def check_limits(delegation: Delegation) -> None:
    if delegation.depth + 1 > MAX_DEPTH:
        raise LimitError(
            f"Subagent depth limit reached: subagents nest at most {MAX_DEPTH} deep and this one "
            "is at the limit. Do this work yourself instead of delegating it."
        )
    if delegation.budget.spawned >= MAX_PER_TURN:
        raise LimitError(
            f"Subagent limit reached: {MAX_PER_TURN} subagents already ran in this turn. Finish "
            "the remaining work yourself without starting more subagents."
        )


# -- running one --------------------------------------------------------------------------------


def spawn(
    parent: NativeSession, profile: Profile, tools: Callable[[NativeSession], dict[str, Any]]
) -> NativeSession:
    """A child session: fresh history and tool state, the parent's provider, permissions and
    budget, the profile's allowlist (never wider than the parent's tools) and step cap.
    `tools(child)` makes the tools bound to the child itself (task, task_output)."""
    assert parent.delegation is not None
    delegation = parent.delegation
    ctx = replace(parent.tool_ctx, sink=None, state={}, read_times=dict(parent.tool_ctx.read_times))
    child = replace(
        parent,
        tools={n: t for n, t in parent.tools.items() if profile.allows(n) and n not in TASK_TOOLS},
        tool_ctx=ctx,
        history=[],
        steers=[],
        view=ContextView(),
        usage=Usage(),
        cost_usd=0.0,
        turn_usage=Usage(),
        max_steps=profile.max_steps,
        background=Background(),
        delegation=Delegation(
            delegation.registry, profile, delegation.depth + 1, delegation.budget
        ),
        switched=None,
    )
    if profile.model and profile.model != "inherit":
        child.switch_model(profile.model)
    if profile.allows("task") and "task" in parent.tools:
        child.tools.update(tools(child))
    return child


def absorb(parent: NativeSession, child: NativeSession) -> None:
    """Usage rolls up: the child's calls count toward the parent's turn and session."""
    parent.turn_usage += child.turn_usage
    parent.usage += child.usage
    parent.cost_usd += child.cost_usd


def summarize(child: NativeSession, status: Status, note: str) -> str:
    """The child's last words (its report), or why there are none; at most SUMMARY_LIMIT."""
    last = next((m for m in reversed(child.history) if m.role == "assistant" and m.text), None)
    text = last.text.strip() if last and status == "completed" else ""
    text = "\n".join(t for t in (text, note) if t) or "The subagent ended without a report."
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


# -- background subagents -----------------------------------------------------------------------


@dataclass
class BackgroundTask:
    id: str
    profile: str
    description: str
    done: anyio.Event = field(default_factory=anyio.Event)
    report: Report | None = None
    collected: bool = False

    @property
    def status(self) -> str:
        if not self.done.is_set():
            return "running"
        return self.report.status if self.report else "aborted"

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": self.id, "status": self.status}
        return {**out, **self.report.result()} if self.report else out


class Background:
    """The background subagents of one running turn, run in that turn's task group."""

    def __init__(self) -> None:
        self.tasks: dict[str, BackgroundTask] = {}
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Host the turn's background subagents; leaving cancels the ones still running."""
        self.tasks = {}
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
                    self._group = None
        except BaseExceptionGroup as grouped:
            # Jobs report their own failures, so this is the turn's error: raise it unwrapped.
            if len(grouped.exceptions) == 1:
                raise grouped.exceptions[0] from None
            raise

    def running_count(self) -> int:
        return sum(not t.done.is_set() for t in self.tasks.values())

    def start(self, task: BackgroundTask, job: Callable[[], Awaitable[Report]]) -> None:
        if self._group is None:
            raise LimitError("Background subagents need a running turn.")
        self.tasks[task.id] = task

        async def run() -> None:
            try:
                task.report = await job()
            finally:
                task.done.set()

        self._group.start_soon(run)

    async def wait(self, task: BackgroundTask, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await task.done.wait()

    async def report(self, history: list[Message]) -> bool:
        """Wait for the background subagents nobody collected and put their reports into the
        history for the next model call; False when there were none."""
        pending = [t for t in self.tasks.values() if not t.collected]
        if not pending:
            return False
        lines = ["Background subagents finished:"]
        for task in pending:
            await task.done.wait()
            task.collected = True
            result = json.dumps(task.result(), ensure_ascii=False)
            lines.append(f"- {task.id} ({task.profile}: {task.description}): {result}")
        history.append(Message("user", [TextPart("\n".join(lines))]))
        return True

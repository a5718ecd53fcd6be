"""A session's place in the subagent tree: which profiles it may start, its depth, the turn's
budget, the limits, and the background subagents of a running turn.

Subagents nest at most `MAX_DEPTH` deep and at most `MAX_PER_TURN` run per top-level turn.
Background subagents live in the parent turn's task group: cancelling the turn cancels them, and
the turn does not end while one of them has not reported.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from server.agent.profiles import Profile, ProfileRegistry
from server.providers.messages import Message, TextPart

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

MAX_DEPTH = 5
MAX_PER_TURN = 32
TASK_TOOLS = ("task", "task_output")
Status = Literal["completed", "failed", "aborted"]


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

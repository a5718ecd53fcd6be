"""A session's place in the subagent tree: which profiles it may start, its depth, the turn's
budget, the limits, and its background subagents.

Subagents nest at most `MAX_DEPTH` deep and at most `MAX_PER_TURN` run per top-level turn.
Background subagents outlive their turn when the session has a host (`Background`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from protocol.methods import BackgroundSubagent
from protocol.updates import SessionUpdateKind, SubagentUpdate
from server.agent.profiles import Profile, ProfileRegistry
from server.providers.messages import Message, TextPart
from server.turn import ForwardingSink, SessionHost, TurnSink

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

MAX_DEPTH = 5
MAX_PER_TURN = 32
TASK_TOOLS = ("task", "task_output", "kill_task")
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
class Progress:
    """What a subagent has done so far."""

    done: list[str] = field(default_factory=list)
    """The titles of the tool calls it finished, in order."""
    files: list[str] = field(default_factory=list)
    """The files it wrote (its `outputFiles`)."""


@dataclass
class BackgroundTask:
    id: str
    profile: str
    description: str
    turn_id: str = ""
    """The turn that started it."""
    progress: Progress = field(default_factory=Progress)
    done: anyio.Event = field(default_factory=anyio.Event)
    report: Report | None = None
    collected: bool = False
    activity: str | None = None
    final: SubagentUpdate | None = None
    """Hosted: its last `subagent` update, sent when its report is handed to the model."""
    scope: anyio.CancelScope | None = None
    relay: Relay | None = None
    """Hosted: the sink it reports through, moved to the host when its turn ends."""
    quiet: bool = False
    """Stopped by the user: its report waits for the next model call instead of waking the
    session."""

    @property
    def status(self) -> Status | Literal["running"]:
        if not self.done.is_set():
            return "running"
        return self.report.status if self.report else "aborted"

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": self.id, "status": self.status}
        if self.report:
            return {**out, **self.report.result()}
        if self.done.is_set():
            return {**out, "summary": "It was stopped before it finished."}
        return out

    def info(self) -> BackgroundSubagent:
        return BackgroundSubagent(
            task_id=self.id,
            profile=self.profile,
            description=self.description,
            status=self.status,
            turn_id=self.turn_id,
            activity=self.activity if not self.done.is_set() else None,
            reported=self.collected,
        )


class Relay(ForwardingSink):
    """The sink a hosted background subagent reports through: its turn's sink while that turn
    runs, then the host's (`SessionHost.sink_after`). Its final `subagent` update is held back
    until its report is handed to the model, so the card and the report arrive together."""

    def __init__(self, inner: TurnSink, task: BackgroundTask):
        super().__init__(inner)
        self.task = task

    def emit(self, update: SessionUpdateKind) -> None:
        if isinstance(update, SubagentUpdate) and update.id == self.task.id:
            if update.status != "running":
                self.task.final = update
                return
            self.task.activity = update.summary
        self.inner.emit(update)


REPORTS_HEADER = "Background subagents finished:"
INTERRUPTED_HEADER = (
    "Background subagents were interrupted when agentls stopped (they are not running and "
    "will not report; what they changed stays):"
)
KEPT_FINISHED = 32
"""Reported background subagents a session remembers (for task_output and subagents/list)."""


class Background:
    """A session's background subagents.

    Hosted (`SessionHost`: the client shows turns it did not prompt), they outlive the turn that
    started them: a report joins the next model call of whichever turn runs, and one that
    arrives while the session is idle wakes it for a turn of its own. Without a host they run
    in their turn's task group: leaving the turn cancels them, and the turn does not end while
    one has not reported.
    """

    def __init__(self, host: SessionHost | None = None) -> None:
        self.host = host
        self.tasks: dict[str, BackgroundTask] = {}
        self._group: TaskGroup | None = None
        self._jobs: set[asyncio.Task[None]] = set()

    @asynccontextmanager
    async def running(self, turn_id: str) -> AsyncIterator[None]:
        """Around one turn: hosted, hand this turn's subagents to the host when it ends;
        otherwise host them in the turn and cancel the ones still running when it ends."""
        if self.host is not None:
            self._forget_reported()
            try:
                yield
            finally:
                self._detach(turn_id)
            return
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

    def sink_for(self, task: BackgroundTask, sink: TurnSink) -> TurnSink:
        if self.host is None:
            return sink
        task.relay = Relay(sink, task)
        return task.relay

    def start(self, task: BackgroundTask, job: Callable[[], Awaitable[Report]]) -> None:
        if self.host is None and self._group is None:
            raise LimitError("Background subagents need a running turn.")
        self.tasks[task.id] = task

        async def run() -> None:
            try:
                with anyio.CancelScope() as task.scope:
                    task.report = await job()
            finally:
                task.done.set()
                if self.host is not None and not task.quiet:
                    self.host.wake()

        if self._group is not None:
            self._group.start_soon(run)
            return
        # Hosted: the job outlives the turn, so it cannot live in the turn's task group.
        job_task = asyncio.get_running_loop().create_task(run())
        self._jobs.add(job_task)
        job_task.add_done_callback(self._jobs.discard)

    def stop(self, task_id: str, *, by_model: bool) -> bool:
        """Cancel one running subagent (its report says it was aborted); False if it is not
        running. Stopped by the model, it is not reported (the model knows); stopped by the
        user, the model is told at its next call."""
        task = self.tasks.get(task_id)
        if task is None or task.done.is_set() or task.scope is None:
            return False
        task.scope.cancel()
        task.collected = task.collected or by_model
        task.quiet = True
        return True

    async def wait(self, task: BackgroundTask, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await task.done.wait()

    def pending(self) -> bool:
        """Reports are waiting to be handed to the model."""
        return any(t.done.is_set() and not t.collected for t in self.tasks.values())

    def take(self) -> tuple[str, list[SubagentUpdate]] | None:
        """The finished reports nobody collected, now collected: the message that hands them
        to the model, and the final `subagent` update of each (hosted ones held it back)."""
        ready = [t for t in self.tasks.values() if t.done.is_set() and not t.collected]
        if not ready:
            return None
        lines = [REPORTS_HEADER]
        finals = []
        for task in ready:
            task.collected = True
            result = json.dumps(task.result(), ensure_ascii=False)
            lines.append(f"- {task.id} ({task.profile}: {task.description}): {result}")
            if task.final is not None:
                finals.append(task.final)
                task.final = None
        return "\n".join(lines), finals

    async def report(self, history: list[Message]) -> bool:
        """Not hosted: wait for the background subagents nobody collected and put their reports
        into the history for the next model call; False when there were none."""
        pending = [t for t in self.tasks.values() if not t.collected]
        if not pending:
            return False
        for task in pending:
            await task.done.wait()
        taken = self.take()
        assert taken is not None
        history.append(Message("user", [TextPart(taken[0])]))
        return True

    def unreported(self) -> list[dict[str, Any]]:
        """The subagents whose reports the model has not had, as plain data: what a session
        keeps, so that after a stop of the server its model is told (`interrupted_note`)."""
        return [
            {
                "taskId": t.id,
                "profile": t.profile,
                "description": t.description,
                "done": list(t.progress.done),
                "outputFiles": list(t.progress.files),
            }
            | ({"summary": t.report.summary} if t.report else {})
            for t in self.tasks.values()
            if not t.collected and t.status != "aborted"  # stopped with its turn, or by the user
        ]

    async def close(self) -> None:
        """The session closes: stop every subagent still running and wait for them."""
        for task in self.tasks.values():
            if task.scope is not None:
                task.scope.cancel()
        jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)

    def _detach(self, turn_id: str) -> None:
        assert self.host is not None
        for task in self.tasks.values():
            if task.relay is not None and task.turn_id == turn_id and not task.done.is_set():
                task.relay.inner = self.host.sink_after(turn_id)

    def _forget_reported(self) -> None:
        finished = [t for t in self.tasks.values() if t.done.is_set() and t.collected]
        for task in finished[: max(0, len(finished) - KEPT_FINISHED)]:
            del self.tasks[task.id]


def interrupted_note(unreported: list[dict[str, Any]]) -> str | None:
    """What the model is told of the subagents `Background.unreported` listed before a stop."""
    lines = [INTERRUPTED_HEADER]
    for entry in unreported:
        done = ", ".join(entry.get("done") or []) or "no tool call"
        line = f"- {entry.get('taskId')} ({entry.get('profile')}: {entry.get('description')}): "
        line += f"it had finished {done}"
        if entry.get("outputFiles"):
            line += f"; it wrote {', '.join(entry['outputFiles'])}"
        if entry.get("summary"):
            line += f"; its report, never handed over: {entry['summary']}"
        lines.append(line + ".")
    return "\n".join(lines) if len(lines) > 1 else None

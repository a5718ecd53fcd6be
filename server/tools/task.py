"""task and task_output: start subagents and collect what background ones report.

Both tools are bound to the session that runs them, since a subagent is built from its parent
session. Starting one needs no permission of its own: every tool call the subagent makes is
checked like the parent's. A running subagent reaches the parent turn through `SubagentSink`.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from protocol.methods import AskQuestionResult, RequestPermissionResult
from protocol.updates import SubagentUpdate, ToolCall, ToolCallUpdate
from server.agent import subagents
from server.agent.loop import run_turn
from server.agent.subagents import BackgroundTask, LimitError, Report, Status
from server.agent.tool_calls import CALL_ID
from server.providers.messages import Message, TextPart
from server.turn import TurnSink

from .base import Tool, ToolContext, ToolError, ToolInput

if TYPE_CHECKING:
    from server.engines.native import NativeSession

log = logging.getLogger(__name__)

EDIT_KINDS = ("edit", "delete", "move")

TASK_DESCRIPTION = """\
Start a subagent: a separate agent with a fresh context that does one task and reports back \
{summary, outputFiles}. Use it for broad searches or self-contained work whose details would \
flood your own context. It sees nothing of this conversation, so the prompt must say everything \
it needs: the goal, the relevant paths, what to report. Several task calls in one reply run in \
parallel. With background: true you get a taskId at once and keep working; collect the report \
with task_output (reports you have not collected are handed to you before your turn ends). \
Subagents nest at most 5 deep and at most 32 run per user turn; past that, do the work yourself."""

OUTPUT_DESCRIPTION = (
    "Get the report of a background subagent started with task(background: true): "
    "{taskId, status: running|completed|failed|aborted, summary, outputFiles}. By default waits "
    "until it finishes (up to `timeout` seconds); wait: false only checks."
)


class TaskInput(ToolInput):
    subagent_type: str | None = Field(
        None, description="Which subagent to start: one of the names listed in this description."
    )
    profile: str | None = Field(None, description="Same as subagent_type.")
    description: str = Field(description="A short label (3-7 words) shown to the user.")
    prompt: str = Field(description="The complete task for the subagent, self-contained.")
    background: bool = Field(
        False, description="Return a taskId at once instead of waiting for the report."
    )


class TaskTool(Tool):
    name = "task"
    description = TASK_DESCRIPTION
    Input = TaskInput
    # Starting a subagent changes nothing by itself; each of its tool calls is checked.
    read_only = True
    kind = "other"

    def __init__(self, session: NativeSession):
        self.session = session

    def spec(self) -> dict[str, Any]:
        delegation = self.session.delegation
        lines = delegation.registry.summary_lines() if delegation else []
        return {**super().spec(), "description": "\n\n".join([TASK_DESCRIPTION, "\n".join(lines)])}

    def title(self, args: TaskInput) -> str:
        return f"{args.subagent_type or args.profile or 'subagent'}: {args.description}"

    async def run(self, ctx: ToolContext, args: TaskInput) -> dict[str, Any]:
        session = self.session
        delegation = session.delegation
        assert delegation is not None
        wanted = args.subagent_type or args.profile
        profile = delegation.registry.get(wanted) if wanted else None
        if profile is None:
            what = f"Unknown subagent type {wanted!r}" if wanted else "No subagent_type given"
            raise ToolError(f"{what}. Available: {delegation.registry.names()}.")
        try:
            subagents.check_limits(delegation)
        except LimitError as exc:
            raise ToolError(str(exc)) from None
        delegation.budget.spawned += 1
        task_id = CALL_ID.get() or f"sub_{uuid.uuid4().hex[:12]}"
        child = subagents.spawn(session, profile, task_tools)
        up = SubagentSink(ctx.sink, task_id, profile.name, session.spec.cwd)
        up.status("running", args.description)
        job = lambda: run_child(session, child, args.prompt, up)  # noqa: E731
        if args.background:
            session.background.start(BackgroundTask(task_id, profile.name, args.description), job)
            return {"taskId": task_id, "status": "running"}
        report = await job()
        if report.status == "failed":
            raise ToolError(report.summary)
        return report.result()


class TaskOutputInput(ToolInput):
    task_id: str = Field(description="The taskId that task(background: true) returned.")
    wait: bool = Field(True, description="Wait for the subagent to finish.")
    timeout: float = Field(300, gt=0, le=1800, description="Seconds to wait at most.")


class TaskOutputTool(Tool):
    name = "task_output"
    description = OUTPUT_DESCRIPTION
    Input = TaskOutputInput
    read_only = True
    kind = "other"

    def __init__(self, session: NativeSession):
        self.session = session

    def title(self, args: TaskOutputInput) -> str:
        return f"Output of {args.task_id}"

    async def run(self, ctx: ToolContext, args: TaskOutputInput) -> dict[str, Any]:
        background = self.session.background
        task = background.tasks.get(args.task_id)
        if task is None:
            known = ", ".join(background.tasks) or "none in this turn"
            raise ToolError(f"No background subagent {args.task_id!r}. Known: {known}.")
        if args.wait:
            await background.wait(task, args.timeout)
        if task.status == "running":
            return {**task.result(), "hint": "Still running: check again later."}
        task.collected = True
        return task.result()


async def run_child(
    parent: NativeSession, child: NativeSession, prompt: str, up: SubagentSink
) -> Report:
    """Run the child's loop to its end. Failures become a `failed` report; only cancellation
    escapes (after the client is told the subagent was aborted)."""
    status: Status = "aborted"
    note = "The subagent was cancelled before it finished."
    try:
        outcome = await run_turn(child, Message("user", [TextPart(prompt)]), up)
        status, note = "completed", ""
        if outcome.stop_reason == "max_turn_requests":
            note = f"(It stopped at its limit of {child.max_steps} steps.)"
    except Exception as exc:
        log.warning("subagent %s failed: %s", up.id, exc)
        status, note = "failed", f"The subagent failed: {exc or type(exc).__name__}"
    finally:
        subagents.absorb(parent, child)
        report = Report(status, subagents.summarize(child, status, note), up.output_files)
        up.status(status, report.summary, report.output_files)
    return report


class SubagentSink:
    """The sink a subagent's loop reports through. Its tool calls go up to the parent turn
    nested under the `task` call (`parentToolCallId`, ids prefixed with the task call's id so
    they stay unique), along with `subagent` progress; text, thinking, steps and plans stay
    inside (the report sums them up); permission requests and questions go up to the parent's
    sink, and so to the user."""

    def __init__(self, parent: TurnSink, task_id: str, profile: str, cwd: Path):
        self.session_id, self.turn_id = parent.session_id, parent.turn_id
        self.parent, self.id, self.profile, self.cwd = parent, task_id, profile, cwd
        self.output_files: list[str] = []
        self._titles: dict[str, str] = {}
        self._edits: dict[str, list[str]] = {}

    def status(self, status: str, summary: str | None, files: list[str] | None = None) -> None:
        self.parent.emit(
            SubagentUpdate(
                id=self.id, profile=self.profile, status=status, summary=summary, output_files=files
            )
        )

    def emit(self, update: Any) -> None:
        if isinstance(update, ToolCall):
            self._titles[update.tool_call_id] = update.title
            if update.tool_kind in EDIT_KINDS and update.locations:
                self._edits[update.tool_call_id] = [loc.path for loc in update.locations]
            self.parent.emit(self.nested(update))
            self.status("running", update.title)
        elif isinstance(update, ToolCallUpdate):
            self.parent.emit(self.nested(update))
            self._on_tool_update(update)
        elif isinstance(update, SubagentUpdate):
            # a nested subagent shows up under its own task call, named as the parent sees it
            self.parent.emit(update.model_copy(update={"id": self.nested_id(update.id)}))

    def nested(self, update: ToolCall | ToolCallUpdate) -> Any:
        """The update as the parent turn sees it: ids under this task call's id."""
        parent = update.parent_tool_call_id
        return update.model_copy(
            update={
                "tool_call_id": self.nested_id(update.tool_call_id),
                "parent_tool_call_id": self.nested_id(parent) if parent else self.id,
            }
        )

    def nested_id(self, call_id: str) -> str:
        return f"{self.id}/{call_id}"

    def _on_tool_update(self, update: ToolCallUpdate) -> None:
        if update.status == "completed":
            paths = self._edits.pop(update.tool_call_id, [])
            paths += [update.diff.path] if update.diff else []
            for path in paths:
                self._add_file(path)
        elif update.status in ("failed", "denied"):
            title = self._titles.get(update.tool_call_id, "tool call")
            self.status("running", f"{title} ({update.status})")

    def _add_file(self, path: str) -> None:
        p = Path(path)
        try:
            shown = p.resolve().relative_to(self.cwd.resolve()).as_posix()
        except (ValueError, OSError):
            shown = str(p)
        if shown not in self.output_files:
            self.output_files.append(shown)

    async def request_permission(self, tool_call: Any, options: list) -> RequestPermissionResult:
        title = f"{self.profile} subagent: {tool_call.title}"
        call_id = self.nested_id(tool_call.tool_call_id)  # the id its card has in the parent
        return await self.parent.request_permission(
            tool_call.model_copy(update={"title": title, "tool_call_id": call_id}), options
        )

    async def ask_question(self, questions: list, *, timeout: float) -> AskQuestionResult:
        return await self.parent.ask_question(questions, timeout=timeout)


def task_tools(session: NativeSession) -> dict[str, Tool]:
    """The task tools bound to `session`."""
    return {t.name: t for t in (TaskTool(session), TaskOutputTool(session))}

"""task, task_output and kill_task: start subagents, collect what background ones report, stop
one that is no longer needed.

Both tools are bound to the session that runs them, since a subagent is built from its parent
session. Starting one needs no permission of its own: every tool call the subagent makes is
checked like the parent's. A running subagent reaches the parent turn through `SubagentSink`.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
from pydantic import Field

from server.agent import subagents
from server.agent.delegation import BackgroundTask, LimitError, check_limits
from server.agent.state import AgentSession
from server.agent.subagents import SubagentSink, run_child
from server.agent.tool_calls import CALL_ID
from server.tools.base import Tool, ToolContext, ToolError, ToolInput

TASK_DESCRIPTION = """\
Start a subagent: a separate agent with a fresh context that does one task and reports back \
{summary, outputFiles}. Use it for broad searches or self-contained work whose details would \
flood your own context. It sees nothing of this conversation, so the prompt must say everything \
it needs: the goal, the relevant paths, what to report. Several task calls in one reply run in \
parallel. With background: true you get a taskId at once and keep working; collect the report \
with task_output, or let it come to you: a report you have not collected arrives as a message \
once it is done. Stop one you no longer need with kill_task. \
Subagents nest at most 5 deep and at most 32 run per user turn; past that, do the work yourself."""

OUTPUT_DESCRIPTION = (
    "Get the report of a background subagent started with task(background: true): "
    "{taskId, status: running|completed|failed|aborted, summary, outputFiles}. By default waits "
    "until it finishes (up to `timeout` seconds); wait: false only checks."
)


class TaskInput(ToolInput):
    subagent_type: str | None = Field(
        None,
        description="Which subagent to start: one of the names listed in this description "
        "(default: executor).",
    )
    profile: str | None = Field(None, description="Same as subagent_type.")
    description: str = Field(description="A short label (3-7 words) shown to the user.")
    prompt: str = Field(description="The complete task for the subagent, self-contained.")
    background: bool = Field(
        False, description="Return a taskId at once instead of waiting for the report."
    )


def default_profile(session: AgentSession) -> str:
    """The profile a `task` call without a type runs: `subagents.default`, else `executor`."""
    configured = (session.spec.config.get("subagents") or {}).get("default")
    return configured if isinstance(configured, str) and configured else "executor"


class TaskTool(Tool):
    name = "task"
    description = TASK_DESCRIPTION
    Input = TaskInput
    # Starting a subagent changes nothing by itself; each of its tool calls is checked.
    read_only = True
    kind = "other"

    def __init__(self, session: AgentSession):
        self.session = session

    def spec(self) -> dict[str, Any]:
        delegation = self.session.delegation
        lines = delegation.registry.summary_lines() if delegation else []
        return {**super().spec(), "description": "\n\n".join([TASK_DESCRIPTION, "\n".join(lines)])}

    def title(self, args: TaskInput) -> str:
        return f"{args.subagent_type or args.profile or default_profile(self.session)}: {args.description}"

    async def run(self, ctx: ToolContext, args: TaskInput) -> dict[str, Any]:
        session = self.session
        delegation = session.delegation
        assert delegation is not None
        wanted = args.subagent_type or args.profile or default_profile(session)
        profile = delegation.registry.get(wanted)
        if profile is None:
            raise ToolError(
                f"Unknown subagent type {wanted!r}. Available: {delegation.registry.names()}."
            )
        try:
            check_limits(delegation)
        except LimitError as exc:
            raise ToolError(str(exc)) from None
        delegation.budget.spawned += 1
        task_id = CALL_ID.get() or f"sub_{uuid.uuid4().hex[:12]}"
        child = subagents.spawn(session, profile, task_tools)
        cwd = session.spec.cwd
        if args.background:
            task = BackgroundTask(task_id, profile.name, args.description, ctx.sink.turn_id)
            sink = session.background.sink_for(task, ctx.sink)
            up = SubagentSink(sink, task_id, profile.name, cwd, progress=task.progress)
            up.status("running", args.description)
            session.background.start(task, lambda: run_child(session, child, args.prompt, up))
            return {"taskId": task_id, "status": "running"}
        up = SubagentSink(ctx.sink, task_id, profile.name, cwd)
        up.status("running", args.description)
        report = await run_child(session, child, args.prompt, up)
        if report.status == "failed":
            raise ToolError(report.summary)
        return report.result()


class TaskRef(ToolInput):
    task_id: str = Field(description="The taskId that task(background: true) returned.")


def find_task(session: AgentSession, task_id: str) -> BackgroundTask:
    task = session.background.tasks.get(task_id)
    if task is None:
        known = ", ".join(session.background.tasks) or "none"
        raise ToolError(f"No background subagent {task_id!r}. Known: {known}.")
    return task


class TaskOutputInput(TaskRef):
    wait: bool = Field(True, description="Wait for the subagent to finish.")
    timeout: float = Field(300, gt=0, le=1800, description="Seconds to wait at most.")


class TaskOutputTool(Tool):
    name = "task_output"
    description = OUTPUT_DESCRIPTION
    Input = TaskOutputInput
    read_only = True
    kind = "other"

    def __init__(self, session: AgentSession):
        self.session = session

    def title(self, args: TaskOutputInput) -> str:
        return f"Output of {args.task_id}"

    async def run(self, ctx: ToolContext, args: TaskOutputInput) -> dict[str, Any]:
        background = self.session.background
        task = find_task(self.session, args.task_id)
        if args.wait:
            await background.wait(task, args.timeout)
        if task.status == "running":
            return {**task.result(), "hint": "Still running: check again later."}
        task.collected = True
        return task.result()


class KillTaskTool(Tool):
    name = "kill_task"
    description = (
        "Stop a background subagent started with task(background: true) that is no longer "
        "needed. What it already changed stays; it reports nothing more."
    )
    Input = TaskRef
    # It only stops work this session started; nothing outside the session changes.
    read_only = True
    kind = "other"

    def __init__(self, session: AgentSession):
        self.session = session

    def title(self, args: TaskRef) -> str:
        return f"Stop {args.task_id}"

    async def run(self, ctx: ToolContext, args: TaskRef) -> dict[str, Any]:
        background = self.session.background
        task = find_task(self.session, args.task_id)
        if not background.stop(args.task_id, by_model=True):
            task.collected = True
            return {**task.result(), "hint": "It had already finished: this is its report."}
        with anyio.move_on_after(STOP_WAIT_S):
            await task.done.wait()
        if task.final is not None and ctx.sink is not None:
            ctx.sink.emit(task.final)
            task.final = None
        return task.result()


STOP_WAIT_S = 30.0
"""How long kill_task waits for a stopped subagent to close its tool calls."""


def task_tools(session: AgentSession) -> dict[str, Tool]:
    """The task tools bound to `session`."""
    tools = (TaskTool(session), TaskOutputTool(session), KillTaskTool(session))
    return {t.name: t for t in tools}

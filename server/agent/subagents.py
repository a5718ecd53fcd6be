"""Subagents: agents a session starts (the `task` tool) to do one job in a context of their own.

A subagent runs the same loop as its parent with a profile's tool allowlist and step cap. It
never talks to the user directly: its permission requests and questions go up through the
parent turn's sink, its progress reaches the client as `subagent` updates whose `id` is the
toolCallId of the `task` call that started it, and it returns `{summary, outputFiles}`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, assert_never

from protocol.methods import AskQuestionResult, RequestPermissionResult
from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Checkpoint,
    Compaction,
    McpStatus,
    ModeChanged,
    ModelSwitched,
    PermissionNote,
    Plan,
    QuestionNote,
    SessionUpdateKind,
    StepFinish,
    StoreWarning,
    StreamRetry,
    SubagentUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    UserMessageChunk,
    WorkspaceTrust,
)
from server.agent.delegation import TASK_TOOLS, Background, Delegation, Progress, Report, Status
from server.agent.loop import run_turn
from server.agent.profiles import SUMMARY_LIMIT, Profile
from server.agent.state import AgentSession
from server.agent.view import ContextView
from server.providers.messages import Message, TextPart, Usage
from server.turn import TurnSink

log = logging.getLogger(__name__)

EDIT_KINDS = ("edit", "delete", "move")


@dataclass(frozen=True)
class RunningSubagent:
    """The subagent whose loop is running in this context (traces tag its model calls)."""

    id: str
    """Its `task` call's id, after those of the subagents it runs in (`outer/inner`): the
    prefix its tool calls carry in the parent's updates."""
    profile: str
    parent_tool_call_id: str

    def to_trace(self) -> dict[str, str]:
        return {
            "id": self.id,
            "profile": self.profile,
            "parentToolCallId": self.parent_tool_call_id,
        }


running_subagent: ContextVar[RunningSubagent | None] = ContextVar(
    "agentls_running_subagent", default=None
)


def spawn(
    parent: AgentSession, profile: Profile, tools: Callable[[AgentSession], dict[str, Any]]
) -> AgentSession:
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
        seen={},
    )
    if profile.model and profile.model != "inherit":
        child.switch_model(profile.model)
    if profile.allows("task") and "task" in parent.tools:
        child.tools.update(tools(child))
    return child


def absorb(parent: AgentSession, child: AgentSession) -> None:
    """Usage rolls up: the child's calls count toward the parent's turn and session."""
    parent.turn_usage += child.turn_usage
    parent.usage += child.usage
    parent.cost_usd += child.cost_usd


def summarize(child: AgentSession, status: Status, note: str) -> str:
    """The child's last words (its report), or why there are none; at most SUMMARY_LIMIT."""
    last = next((m for m in reversed(child.history) if m.role == "assistant" and m.text), None)
    text = last.text.strip() if last and status == "completed" else ""
    text = "\n".join(t for t in (text, note) if t) or "The subagent ended without a report."
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


async def run_child(
    parent: AgentSession, child: AgentSession, prompt: str, up: SubagentSink
) -> Report:
    """Run the child's loop to its end. Failures become a `failed` report; only cancellation
    escapes (after the client is told the subagent was aborted)."""
    status: Status = "aborted"
    note = "The subagent was cancelled before it finished."
    outer = running_subagent.get()
    path = f"{outer.id}/{up.id}" if outer else up.id
    token = running_subagent.set(RunningSubagent(path, up.profile, up.id))
    try:
        outcome = await run_turn(child, Message("user", [TextPart(prompt)]), up)
        status, note = "completed", ""
        if outcome.stop_reason == "max_turn_requests":
            note = f"(It stopped at its limit of {child.max_steps} steps.)"
    except Exception as exc:
        log.warning("subagent %s failed: %s", up.id, exc)
        status, note = "failed", f"The subagent failed: {exc or type(exc).__name__}"
    finally:
        running_subagent.reset(token)
        absorb(parent, child)
        report = Report(status, summarize(child, status, note), up.output_files)
        up.status(status, report.summary, report.output_files)
    return report


class SubagentSink:
    """The sink a subagent's loop reports through. Its tool calls go up to the parent turn
    nested under the `task` call (`parentToolCallId`, ids prefixed with the task call's id so
    they stay unique), along with `subagent` progress; text, thinking, steps and plans stay
    inside (the report sums them up); permission requests and questions go up to the parent's
    sink, and so to the user."""

    def __init__(
        self,
        parent: TurnSink,
        task_id: str,
        profile: str,
        cwd: Path,
        *,
        progress: Progress | None = None,
    ):
        self.session_id, self.turn_id = parent.session_id, parent.turn_id
        self.parent, self.id, self.profile, self.cwd = parent, task_id, profile, cwd
        self.progress = progress or Progress()
        self.output_files = self.progress.files
        self._titles: dict[str, str] = {}
        self._edits: dict[str, list[str]] = {}
        self._before: dict[str, Stamps] = {}
        """The workspace's files as each shell command found them (it writes what it likes)."""

    def status(
        self,
        status: Status | Literal["running"],
        summary: str | None,
        files: list[str] | None = None,
    ) -> None:
        self.parent.emit(
            SubagentUpdate(
                id=self.id, profile=self.profile, status=status, summary=summary, output_files=files
            )
        )

    def emit(self, update: SessionUpdateKind) -> None:
        match update:
            case ToolCall():
                self._titles[update.tool_call_id] = update.title
                if update.tool_kind in EDIT_KINDS and update.locations:
                    self._edits[update.tool_call_id] = [loc.path for loc in update.locations]
                if update.tool_kind == "execute" and (stamps := file_stamps(self.cwd)):
                    self._before[update.tool_call_id] = stamps
                self.parent.emit(self.nested(update))
                self.status("running", update.title)
            case ToolCallUpdate():
                self.parent.emit(self.nested(update))
                self._on_tool_update(update)
            case Checkpoint():
                self.parent.emit(update)  # the parent's turn is what a rewind undoes
            case SubagentUpdate():
                # a nested subagent shows up under its own task call, named as the parent sees it
                self.parent.emit(update.model_copy(update={"id": self.nested_id(update.id)}))
            case (
                AgentMessageChunk()
                | AgentThoughtChunk()
                | UserMessageChunk()
                | StepFinish()
                | Plan()
                | ModelSwitched()
                | ModeChanged()
                | Compaction()
                | StreamRetry()
                | McpStatus()
                | WorkspaceTrust()
                | StoreWarning()
                | TurnEnd()
            ):
                pass  # the subagent's own: its report sums them up
            case PermissionNote() | QuestionNote():
                pass  # the parent's sink notes them when it asks the user
            case _:
                assert_never(update)

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
        if update.status != "in_progress":
            before = self._before.pop(update.tool_call_id, None)
            if before is not None and update.status != "denied":
                for path in changed_files(before, file_stamps(self.cwd) or {}):
                    self._add_file(str(self.cwd / path))
        if update.status == "completed":
            self.progress.done.append(self._titles.get(update.tool_call_id, "a tool call"))
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


Stamps = dict[str, tuple[int, int]]
SCAN_LIMIT = 10_000
"""More files than this and a shell command's writes are not looked for: each scan blocks the
event loop (about 10 ms per thousand files)."""
_SKIPPED_DIRS = ("node_modules", "__pycache__", "venv")


def file_stamps(root: Path) -> Stamps | None:
    """(mtime, size) of each workspace file by its relative path, hidden and dependency folders
    left out; None for a workspace of more than `SCAN_LIMIT` files (too slow to compare)."""
    stamps: Stamps = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
        for name in files:
            path = Path(folder, name)
            try:
                stat = path.lstat()
            except OSError:
                continue
            stamps[path.relative_to(root).as_posix()] = (stat.st_mtime_ns, stat.st_size)
            if len(stamps) > SCAN_LIMIT:
                return None
    return stamps


def changed_files(before: Stamps, after: Stamps) -> list[str]:
    """Files that appeared or changed between two scans, in path order."""
    return sorted(p for p, stamp in after.items() if before.get(p) != stamp)

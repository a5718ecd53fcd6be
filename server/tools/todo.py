"""todo_write: the agent's plan, replaced whole on every write and shown to the user."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from protocol.updates import Plan, PlanEntry
from server.config import positive
from server.logs import warn_once
from server.tools.base import Tool, ToolContext, ToolError, ToolInput

log = logging.getLogger(__name__)

Status = Literal["pending", "in_progress", "completed", "cancelled"]


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    content: str = Field(min_length=1)
    status: Status


class TodoInput(ToolInput):
    todos: list[TodoItem]
    expected_revision: int | None = Field(
        None, description="Fail with REVISION_CONFLICT unless the list is at this revision."
    )


class TodoWrite(Tool):
    name = "todo_write"
    description = (
        "Replace your todo list for the current task (the whole list every time). Use it for "
        "work with three or more steps: mark exactly one item in_progress while you work on it "
        "and completed as soon as it is done. Items: {id, content, status: pending | "
        "in_progress | completed | cancelled}. Pass expected_revision to avoid overwriting a "
        "newer list. The user sees the list as your plan."
    )
    Input = TodoInput
    read_only = True
    kind = "think"

    def title(self, args: TodoInput) -> str:
        return f"Update plan ({len(args.todos)} items)"

    async def run(self, ctx: ToolContext, args: TodoInput) -> dict:
        revision = ctx.state.get("todoRevision", 0)
        if args.expected_revision is not None and args.expected_revision != revision:
            raise ToolError(
                f"REVISION_CONFLICT: the list is at revision {revision}, not "
                f"{args.expected_revision}; re-read it and write the whole list again"
            )
        check(args.todos, max_items(ctx.config))
        todos = [t.model_dump() for t in args.todos]
        ctx.state["todos"] = todos
        ctx.state["todoRevision"] = revision + 1
        if ctx.sink is not None:
            ctx.sink.emit(Plan(entries=[PlanEntry(**t) for t in todos]))
        counts = Counter(t["status"] for t in todos)
        summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(counts.items()))
        return {"revision": revision + 1, "todos": todos, "summary": summary or "empty list"}


DEFAULT_MAX_ITEMS = 50


def max_items(config: dict) -> int:
    """`todos.maxPerSession`: how many items the list may hold (default 50)."""
    value = positive((config.get("todos") or {}).get("maxPerSession"), DEFAULT_MAX_ITEMS)
    return value if isinstance(value, int) else DEFAULT_MAX_ITEMS


STATE_KEYS = ("todos", "todoRevision")


def unsaved(config: dict) -> tuple[str, ...]:
    """The tool-state keys a stored session leaves out: the list's, with `todos.persist: false`
    (the list then lives as long as the process serves the session)."""
    persist = (config.get("todos") or {}).get("persist", True)
    if not isinstance(persist, bool):
        warn_once(
            log,
            ("todos.persist", repr(persist)),
            "todos.persist %r is not true or false; the todo list is stored",
            persist,
        )
        return ()
    return () if persist else STATE_KEYS


def check(todos: list[TodoItem], limit: int = DEFAULT_MAX_ITEMS) -> None:
    problems = []
    if len(todos) > limit:
        problems.append(
            f"{len(todos)} items is over the limit of {limit} per session (todos.maxPerSession): "
            "merge or drop items"
        )
    duplicates = sorted(i for i, n in Counter(t.id.strip() for t in todos).items() if n > 1)
    if duplicates:
        problems.append(f"duplicate id(s): {', '.join(duplicates)}")
    if any(not t.id.strip() for t in todos):
        problems.append("every todo needs a non-empty id")
    if any(not t.content.strip() for t in todos):
        problems.append("every todo needs non-empty content")
    active = [t.id for t in todos if t.status == "in_progress"]
    if len(active) > 1:
        problems.append(f"only one todo may be in_progress, got {len(active)}: {', '.join(active)}")
    if problems:
        raise ToolError("todo list not changed: " + "; ".join(problems))

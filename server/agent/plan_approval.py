"""Leaving plan mode: the first `todo_write` of a plan-mode turn asks the user to approve the
plan. Approved, the session switches mode (`acceptEdits` or `default`, as the user picks) and
the turn goes on to carry the plan out; refused, the call is refused and the model keeps
planning. A client that cannot answer permission requests keeps the session in plan mode.
"""

from __future__ import annotations

from typing import Any

import anyio

from protocol.methods import PermissionMode, PermissionOption, ToolCallRef
from protocol.updates import ModeChanged
from server.agent.state import AgentSession
from server.providers.messages import ToolCallPart
from server.tools.base import Tool
from server.turn import TurnSink, UserNotReachable

PLAN_TOOL = "todo_write"
OPTIONS = [
    PermissionOption(option_id="allow_always", name="Yes, and accept edits", kind="allow_always"),
    PermissionOption(option_id="allow_once", name="Yes, ask before edits", kind="allow_once"),
    PermissionOption(option_id="reject_once", name="No, keep planning", kind="reject_once"),
]
MODE_AFTER: dict[str, PermissionMode] = {"allow_always": "acceptEdits", "allow_once": "default"}
REASON = "plan approved"


def approval_due(session: AgentSession, tool: Tool) -> bool:
    subagent = session.delegation is not None and session.delegation.profile is not None
    return (
        session.permissions.mode == "plan"
        and tool.name == PLAN_TOOL
        and not session.plan_asked
        and not subagent
    )


async def approve_plan(
    session: AgentSession, tool: Tool, args: Any, call: ToolCallPart, sink: TurnSink
) -> str | None:
    """None when the plan is written (approved, or no one can answer); else the refusal the
    model reads."""
    session.plan_asked = True
    ref = ToolCallRef(
        tool_call_id=call.id,
        name=call.name,
        title="Approve the plan and leave plan mode",
        input=call.arguments,
        reason="the plan is ready: approve it to let the agent carry it out",
        risk="medium",
    )
    reply = None
    try:
        with anyio.move_on_after(session.approval_timeout):
            reply = await sink.request_permission(ref, OPTIONS)
    except UserNotReachable:
        return None
    if reply is None:
        return "The user did not answer in time; the plan was not approved. Stay in plan mode."
    kind = reply.outcome.option_id if reply.outcome.outcome == "selected" else None
    mode = MODE_AFTER.get(kind or "")
    if mode is None:
        said = f" The user said: {reply.message}" if reply.message else ""
        return (
            "The user did not approve this plan. Stay in plan mode: refine the plan, or ask "
            f"what to change.{said}"
        )
    session.permissions.mode = mode
    sink.emit(ModeChanged(mode=mode, reason=REASON))
    return None

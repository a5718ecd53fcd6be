"""Running the tool calls of one model reply: validate, check permission, run, report.

Every failure becomes a tool result the model reads; only cancellation escapes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError

from protocol.methods import RequestPermissionResult, ToolCallRef
from protocol.updates import Diff, Location, ToolCall, ToolCallUpdate, ToolKind, ToolStatus
from server import permissions
from server.agent import rules
from server.agent.hooks import Verdict, session_hooks, with_context
from server.agent.plan_approval import approval_due, approve_plan
from server.agent.state import AgentSession
from server.permissions import Decision
from server.providers.messages import Message, ToolCallPart, ToolResultPart
from server.skills import granted_tools
from server.tools.base import Tool, ToolContext, ToolError, ToolResult, render
from server.tools.files import WriteFile, WriteFileInput
from server.tools.live import LIVE_OUTPUT
from server.trust import is_trusted
from server.turn import TurnSink, UserNotReachable

log = logging.getLogger(__name__)

CALL_ID: ContextVar[str | None] = ContextVar("CALL_ID", default=None)
"""The id of the tool call being run (the `task` tool names its subagent after it)."""


def _parse(tool: Tool | None, call: ToolCallPart) -> Any:
    return tool.Input.model_validate(call.arguments) if tool else None


def _read_only(tool: Tool, call: ToolCallPart) -> bool:
    try:
        return tool.is_read_only(_parse(tool, call))
    except ValidationError:
        return False  # run_one reports the bad arguments


OBSERVING_KINDS = ("read", "search", "fetch", "think")


def observing_only(session: AgentSession, calls: Sequence[ToolCallPart]) -> bool:
    """Whether these calls only looked: read-only, and none that waits on work running
    elsewhere (a subagent, a background command) or on the user, during which the workspace
    may change."""
    for call in calls:
        tool = session.tools.get(call.name)
        if tool is None or tool.kind not in OBSERVING_KINDS or not _read_only(tool, call):
            return False
    return True


def announce(session: AgentSession, call: ToolCallPart, sink: TurnSink) -> None:
    tool = session.tools.get(call.name)
    title, locations = call.name, None
    kind: ToolKind = "other"
    if tool:
        kind = tool.kind
        try:
            args = _parse(tool, call)
            title = tool.title(args)
            locations = [Location(path=str(session.tool_ctx.resolve(p))) for p in tool.paths(args)]
        except ValidationError:
            pass
    sink.emit(
        ToolCall(
            tool_call_id=call.id,
            name=call.name,
            title=title,
            tool_kind=kind,
            input=call.arguments,
            locations=locations or None,
        )
    )


async def run_tool_calls(
    session: AgentSession, calls: Sequence[ToolCallPart], sink: TurnSink
) -> list[ToolResultPart]:
    """Read-only calls in a row run concurrently; others one at a time, in order. Their results
    follow the calls in the history, also when interrupted (the loop answers the calls left)."""
    results: dict[str, ToolResultPart] = {}

    async def run_into(call: ToolCallPart) -> None:
        results[call.id] = await run_one(session, call, sink)

    try:
        batch: list[ToolCallPart] = []
        for call in [*calls, None]:
            tool = session.tools.get(call.name) if call else None
            if call and tool and _read_only(tool, call):
                batch.append(call)
                continue
            if batch:
                async with anyio.create_task_group() as tg:
                    for queued in batch:
                        tg.start_soon(run_into, queued)
                batch = []
            if call:
                await run_into(call)
    finally:
        answered = [results[c.id] for c in calls if c.id in results]
        session.history.append(Message("tool", [*answered]))
    return answered


async def run_one(session: AgentSession, call: ToolCallPart, sink: TurnSink) -> ToolResultPart:
    def fail(message: str, status: ToolStatus = "failed") -> ToolResultPart:
        sink.emit(ToolCallUpdate(tool_call_id=call.id, status=status, error=message))
        return ToolResultPart(call.id, call.name, message, is_error=True)

    tool = session.tools.get(call.name)
    if tool is None:
        return fail(unavailable(session, call.name))
    try:
        args = _parse(tool, call)
    except ValidationError as exc:
        return fail(f"Invalid arguments for {call.name}: {_describe(exc)}")

    asked = tool
    # Each call judges and opens its own paths: calls on one path may run at once.
    ctx = replace(session.tool_ctx, judged={}, shared=set())
    refusal, tool, args = await _check_permission(session, tool, args, call, sink, ctx=ctx)
    if refusal:
        return fail(refusal, "denied")

    sink.emit(ToolCallUpdate(tool_call_id=call.id, status="in_progress"))
    token = CALL_ID.set(call.id)
    live = LIVE_OUTPUT.set(
        lambda text: sink.emit(
            ToolCallUpdate(tool_call_id=call.id, status="in_progress", output=text)
        )
    )
    try:
        outcome = await tool.run(ctx, args)
    except ToolError as exc:
        return fail(str(exc))
    except Exception as exc:
        log.exception("tool %s crashed", call.name)
        return fail(f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}")
    finally:
        LIVE_OUTPUT.reset(live)
        CALL_ID.reset(token)
    result = outcome if isinstance(outcome, ToolResult) else ToolResult(outcome)
    if tool is not asked and isinstance(result.content, dict):
        result.content = {**result.content, "note": USER_VERSION}
    text = render(result.content)
    if result.is_error:
        return fail(text)
    text = await _post_tool_use(session, tool, call, result.content, text)
    diff = (
        Diff(path=result.diff.path, old_text=result.diff.old_text, new_text=result.diff.new_text)
        if result.diff
        else None
    )
    sink.emit(ToolCallUpdate(tool_call_id=call.id, status="completed", output=text, diff=diff))
    return ToolResultPart(call.id, call.name, text, images=list(result.images))


async def _post_tool_use(
    session: AgentSession, tool: Tool, call: ToolCallPart, content: Any, text: str
) -> str:
    """The result as the model gets it after the PostToolUse hooks: their context and block
    reasons added, an MCP tool's output replaced when a hook says so."""
    hooks = session_hooks(session)
    if hooks is None:
        return text
    fields = {
        "tool_name": tool.name,
        "tool_input": call.arguments,
        "tool_response": content,
        "tool_use_id": call.id,
    }
    verdict = await hooks.run("PostToolUse", fields, tool=tool.name, tool_use_id=call.id)
    if verdict.updated_output is not None and tool.name.startswith("mcp__"):
        text = render(verdict.updated_output)
    return with_context(text, verdict)


async def _check_permission(
    session: AgentSession,
    tool: Tool,
    args: Any,
    call: ToolCallPart,
    sink: TurnSink,
    *,
    ctx: ToolContext,
    shown: dict[str, Any] | None = None,
    rewrites: int = 0,
) -> tuple[str | None, Tool, Any]:
    """(None, tool, args to run) when the call may run, else (the message the model gets, ...).
    The tool is another only when the user wrote their own version of a proposed change.
    `shown`: the input the user is asked about when an answer rewrote the model's."""
    hooked: Verdict | None = None
    if rewrites == 0:
        hooked = await _pre_tool_use(session, tool, call)
        if hooked is not None and (hooked.permission == "deny" or hooked.stop):
            why = hooked.reason or hooked.stop or ""
            return (
                f"Not allowed: a PreToolUse hook denied it{': ' + why if why else ''}.",
                tool,
                args,
            )
        if hooked is not None and hooked.updated_input is not None:
            rewritten = _without_outside(hooked.updated_input)
            try:
                new = tool.Input.model_validate(rewritten)
            except ValidationError as exc:
                return f"A hook's rewritten input is invalid: {_describe(exc)}", tool, args
            if _judged_fields(session, tool, new) != _judged_fields(session, tool, args):
                hooked.permission = None if hooked.permission == "allow" else hooked.permission
            args, shown = new, rewritten
    ruled = rules.judge(tool, args, ctx)
    if ruled is not None and ruled.action == "deny":
        return f"Not allowed: {ruled.reason}.", tool, args
    if hooked is not None and hooked.permission == "ask" and ruled is None:
        ruled = Decision("ask", hooked.reason or "a PreToolUse hook asks first")
    if approval_due(session, tool):
        return await approve_plan(session, tool, args, call, sink), tool, args
    asked = Asked(call, call.arguments if shown is None else shown, rewrites, ctx)
    if hooked is not None and hooked.permission == "allow" and ruled is None:
        return _hook_allowed(session, ctx, tool, args)
    return await _ask(session, tool, args, asked, sink, ruled)


async def _permission_request(
    session: AgentSession, tool: Tool, asked: Asked
) -> RequestPermissionResult | None:
    """A PermissionRequest hook's answer to the question, as the user's would be (None: the
    user is asked)."""
    hooks = session_hooks(session)
    if hooks is None:
        return None
    call = asked.call
    fields = {"tool_name": tool.name, "tool_input": asked.shown, "tool_use_id": call.id}
    verdict = await hooks.run("PermissionRequest", fields, tool=tool.name, tool_use_id=call.id)
    answer = verdict.answer
    if answer is None:
        return None
    allowed = answer["behavior"] == "allow"
    updated = answer.get("updatedInput") if allowed else None
    return RequestPermissionResult.model_validate(
        {
            "outcome": {
                "outcome": "selected",
                "optionId": "allow_once" if allowed else "reject_once",
            },
            "updatedInput": updated if isinstance(updated, dict) else None,
            "message": None
            if allowed
            else answer.get("message") or "a PermissionRequest hook denied it",
        }
    )


async def _pre_tool_use(session: AgentSession, tool: Tool, call: ToolCallPart) -> Verdict | None:
    hooks = session_hooks(session)
    if hooks is None:
        return None
    fields = {"tool_name": tool.name, "tool_input": call.arguments, "tool_use_id": call.id}
    return await hooks.run("PreToolUse", fields, tool=tool.name, tool_use_id=call.id)


def _hook_allowed(
    session: AgentSession, ctx: ToolContext, tool: Tool, args: Any
) -> tuple[str | None, Tool, Any]:
    """A PreToolUse hook's `allow` answers the question the policy would ask; what the policy
    refuses stays refused, and what an ask rule (or a deny rule that may cover the call) asks
    is still asked."""
    decision = _decide(session, ctx, tool, args, None)
    if decision.action == "deny":
        return f"Not allowed: {decision.reason}.", tool, args
    return None, tool, leave_sandbox(tool, args) if decision.outside else args


def _without_outside(updated: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in updated.items() if k != "outside_sandbox"}


@dataclass(frozen=True)
class Asked:
    call: ToolCallPart
    shown: dict[str, Any]
    """The input the user sees: the model's, or an earlier answer's rewrite of it."""
    rewrites: int
    ctx: ToolContext
    """The call's own view of the tool context: the paths its decision judged."""


def _decide(
    session: AgentSession, ctx: ToolContext, tool: Tool, args: Any, ruled: Decision | None
) -> Decision:
    """The policy's decision, asked instead of allowed when an ask rule covers the call (such
    a question is never remembered: the rule asks every time)."""
    granted = skill_rules(session)
    decision = permissions.decide(tool, args, ctx, session.permissions, granted=granted)
    if ruled is None and decision.action == "ask" and decision.rule:
        # an ordinary question (what always asks has no rule to remember): a path allow rule
        # covering every path answers it
        if rules.allows(tool, args, ctx):
            return Decision("allow")
    if ruled is None or decision.action == "deny":
        return decision
    return replace(decision, action="ask", reason=ruled.reason, rule="", more=())


async def _ask(
    session: AgentSession,
    tool: Tool,
    args: Any,
    asked: Asked,
    sink: TurnSink,
    ruled: Decision | None,
) -> tuple[str | None, Tool, Any]:
    call = asked.call
    decision = _decide(session, asked.ctx, tool, args, ruled)
    if decision.outside and decision.action != "deny":
        args = leave_sandbox(tool, args)
    if decision.action == "allow":
        return None, tool, args
    if decision.action == "deny":
        return f"Not allowed: {decision.reason}.", tool, args
    proposal = await tool.propose(asked.ctx, args)
    ref = ToolCallRef(
        tool_call_id=call.id,
        name=call.name,
        title=tool.title(args),
        input=asked.shown,
        reason=decision.reason or None,
        risk=tool.call_risk(args),
        proposal=Diff(path=proposal.path, old_text=proposal.old_text, new_text=proposal.new_text)
        if proposal
        else None,
    )
    reply = await _permission_request(session, tool, asked)
    try:
        if reply is None:
            with anyio.move_on_after(session.approval_timeout):
                reply = await sink.request_permission(ref, permissions.options_for(decision))
    except UserNotReachable:
        return (
            (
                "Not allowed: this call needs the user's approval and no one can answer. "
                "Continue without it or explain what you would do."
            ),
            tool,
            args,
        )
    if reply is None:
        late = "The user did not answer the permission request in time; the call was not run."
        return late, tool, args
    kind = reply.outcome.option_id if reply.outcome.outcome == "selected" else None
    if kind in ("allow_once", "allow_always"):
        permissions.remember(session.permissions, decision, kind)
        if reply.updated_input is not None:
            own = users_version(session, reply.updated_input, ref.proposal)
            if own is not None:
                return None, *own
            return await _rewritten(session, tool, args, asked, sink, reply.updated_input, decision)
        return None, tool, args
    if kind is not None:
        permissions.remember(session.permissions, decision, kind)
    reason = f" The user said: {reply.message}" if reply.message else ""
    return (
        (
            "The user denied this tool call. Do not retry it in another form; "
            f"ask the user or choose another approach.{reason}"
        ),
        tool,
        args,
    )


PAYLOAD = frozenset(
    {"content", "old_string", "new_string", "replace_all", "new_line", "expected_line", "timeout"}
)
"""Input fields no permission decision looks at: an answer may change them without the call
being judged again."""
MAX_REWRITES = 3


async def _rewritten(
    session: AgentSession,
    tool: Tool,
    args: Any,
    asked: Asked,
    sink: TurnSink,
    updated: dict[str, Any],
    decision: Decision,
) -> tuple[str | None, Tool, Any]:
    """The call as an allowing answer rewrote it. Another path, command or any other judged
    field is a new call, judged (and asked about) again; `outside_sandbox` never comes from an
    answer, only from allowing a call the policy said runs outside."""
    updated = _without_outside(updated)
    try:
        new = tool.Input.model_validate(updated)
    except ValidationError as exc:
        return f"The user's edited input is invalid: {_describe(exc)}", tool, args
    if _judged_fields(session, tool, new) == _judged_fields(session, tool, args):
        return None, tool, leave_sandbox(tool, new) if decision.outside else new
    if asked.rewrites >= MAX_REWRITES:
        return "Not run: the answers kept changing the call.", tool, args
    return await _check_permission(
        session,
        tool,
        new,
        asked.call,
        sink,
        ctx=asked.ctx,
        shown=updated,
        rewrites=asked.rewrites + 1,
    )


def _judged_fields(session: AgentSession, tool: Tool, args: Any) -> dict[str, Any]:
    """The fields a decision looks at, paths resolved (`a.txt` and its absolute form are one)."""
    paths = set(tool.paths(args))
    fields = args.model_dump() if hasattr(args, "model_dump") else {}
    return {
        k: str(session.tool_ctx.resolve(v)) if isinstance(v, str) and v in paths else v
        for k, v in fields.items()
        if k not in PAYLOAD and k != "outside_sandbox"
    }


def users_version(
    session: AgentSession, updated: dict[str, Any], proposal: Diff | None
) -> tuple[Tool, WriteFileInput] | None:
    """`{"content": text}` answering a proposed file change: a write of the user's text to that
    file (the same file only), in place of the call the model made."""
    content = updated.get("content")
    if proposal is None or not isinstance(content, str) or set(updated) - {"content", "path"}:
        return None
    path = session.tool_ctx.resolve(str(updated.get("path", proposal.path)))
    if path != Path(proposal.path):
        return None
    return session.tools.get("write_file") or WriteFile(), WriteFileInput(
        path=proposal.path, content=content
    )


USER_VERSION = (
    "The user changed your proposed edit before it was written: the file holds their version. "
    "Read it before you edit it again."
)


def leave_sandbox(tool: Tool, args: Any) -> Any:
    """The args of a command that runs outside the sandbox once allowed."""
    if "outside_sandbox" in tool.Input.model_fields:
        return args.model_copy(update={"outside_sandbox": True})
    return args


def unavailable(session: AgentSession, name: str) -> str:
    known = ", ".join(sorted(session.tools))
    profile = session.delegation.profile if session.delegation else None
    if profile is not None:
        return f"{name!r} is not in the {profile.name} subagent's allowlist. Its tools: {known}."
    return f"Unknown tool {name!r}. Available tools: {known}."


def skill_rules(session: AgentSession) -> set[str]:
    """Allow rules from the `allowed-tools` of the skills active in this turn (a project's
    skills only in a trusted workspace); calls that always ask still ask."""
    ctx = session.tool_ctx
    granted = granted_tools(session.skills, ctx.state, trusted=is_trusted(ctx.config))
    return permissions.rules_from_names(granted)


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(input)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)

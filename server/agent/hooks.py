"""Hooks: the user's code, run at points of a turn, that may change what happens there, in
Claude Code's events and JSON output format. One engine whatever runs the hook; today the
hooks are an SDK host's callbacks (`sdkHooks` in the session config, set only by the
stream-json door: `{"matchers": {event: [{matcher, hookCallbackIds, timeout, onFailure}]},
"call": async (callback_id, input, tool_use_id) -> output}`).

Events: PreToolUse (permissionDecision allow/deny/ask, updatedInput, which is judged again as
the call it describes), PermissionRequest (a decision answering the user's question, its
updatedInput judged again as a user's is), PostToolUse (additionalContext, a block reason, updatedMCPToolOutput),
UserPromptSubmit (block the prompt, additionalContext), Stop (block: the turn goes on with the
reason), SessionStart (additionalContext). A hook that fails or times out is skipped, unless
its matcher says `onFailure: block`: then it blocks what it guards.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from server.agent.state import AgentSession
from server.tools.names import CLAUDE_CODE_NAMES

log = logging.getLogger(__name__)

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
)
"""The events agentls calls hooks for."""
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PermissionRequest")
DEFAULT_TIMEOUT = 60.0

Call = Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Hook:
    callback_id: str
    matcher: str | None
    timeout: float
    blocks_on_failure: bool


@dataclass
class Verdict:
    """What the hooks of one event said, combined: deny over ask over allow, the last
    `updatedInput`, every context, the first block or stop."""

    permission: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)
    block: str | None = None
    """A `decision: block` (or a failed blocking hook): the reason."""
    stop: str | None = None
    """`continue: false`: the turn ends, with this reason."""
    updated_output: Any = None
    answer: dict[str, Any] | None = None
    """PermissionRequest: `{behavior: allow, updatedInput?}` or `{behavior: deny, message?}`
    answering the question for the user (a deny over an allow)."""


RANK = {None: 0, "allow": 1, "ask": 2, "deny": 3}


class Hooks:
    def __init__(self, hooks: dict[str, list[Hook]], call: Call, base: dict[str, Any]):
        self.hooks = hooks
        self.call = call
        self.base = base

    @classmethod
    def of(cls, config: dict[str, Any], base: dict[str, Any]) -> Hooks | None:
        """The session's hooks; None when it has none. `base`: the fields every hook input
        carries (session_id, cwd, permission_mode, transcript_path)."""
        section = config.get("sdkHooks")
        if not isinstance(section, dict) or not callable(section.get("call")):
            return None
        hooks = {event: _hooks(section.get("matchers", {}).get(event)) for event in EVENTS}
        return cls(hooks, section["call"], base)

    async def run(
        self,
        event: str,
        fields: dict[str, Any],
        *,
        tool: str | None = None,
        tool_use_id: str | None = None,
    ) -> Verdict:
        verdict = Verdict()
        payload = {**self.base, "hook_event_name": event, **fields}
        for hook in self.hooks.get(event, []):
            if event in TOOL_EVENTS and not _matches(hook.matcher, tool or ""):
                continue
            output = await self._call(hook, payload, tool_use_id)
            if output is None:
                if hook.blocks_on_failure:
                    verdict.block = verdict.block or f"the {event} hook failed"
                    _rank(verdict, "deny", verdict.block)
                continue
            _merge(verdict, output)
        return verdict

    async def _call(
        self, hook: Hook, payload: dict[str, Any], tool_use_id: str | None
    ) -> dict[str, Any] | None:
        try:
            with anyio.fail_after(hook.timeout):
                output = await self.call(hook.callback_id, payload, tool_use_id)
        except TimeoutError:
            log.warning("hook %s timed out after %ss", hook.callback_id, hook.timeout)
            return None
        except HookFailed as exc:
            log.warning("hook %s failed: %s", hook.callback_id, exc)
            return None
        except Exception:
            log.exception("hook %s crashed", hook.callback_id)
            return None
        return output if isinstance(output, dict) else {}


class HookFailed(Exception):
    """The hook could not give an answer (its host said why)."""


def _hooks(matchers: Any) -> list[Hook]:
    found = []
    for entry in matchers if isinstance(matchers, list) else []:
        if not isinstance(entry, dict):
            continue
        timeout = entry.get("timeout")
        seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
        matcher = entry.get("matcher") if isinstance(entry.get("matcher"), str) else None
        blocks = entry.get("onFailure") not in (None, "continue")
        for callback_id in entry.get("hookCallbackIds") or []:
            if isinstance(callback_id, str):
                found.append(Hook(callback_id, matcher, seconds or DEFAULT_TIMEOUT, blocks))
    return found


def _matches(matcher: str | None, tool: str) -> bool:
    """Claude Code's matchers: none, "" or "*" for every tool, else a regex over the tool's
    name (agentls's or Claude Code's)."""
    if not matcher or matcher == "*":
        return True
    names = (tool, CLAUDE_CODE_NAMES.get(tool, tool))
    try:
        pattern = re.compile(matcher)
    except re.error:
        return matcher in names
    return any(pattern.fullmatch(name) for name in names)


def _merge(verdict: Verdict, output: dict[str, Any]) -> None:
    if output.get("continue") is False:
        verdict.stop = verdict.stop or str(output.get("stopReason") or "a hook stopped the turn")
    decision, reason = output.get("decision"), str(output.get("reason") or "")
    if decision == "block":
        verdict.block = verdict.block or reason or "blocked by a hook"
        _rank(verdict, "deny", verdict.block)
    elif decision == "approve":
        _rank(verdict, "allow", reason)
    specific = output.get("hookSpecificOutput")
    if not isinstance(specific, dict):
        return
    permission = specific.get("permissionDecision")
    if permission in ("allow", "deny", "ask"):
        _rank(verdict, permission, str(specific.get("permissionDecisionReason") or ""))
    if isinstance(specific.get("updatedInput"), dict):
        verdict.updated_input = specific["updatedInput"]
    context = specific.get("additionalContext")
    if isinstance(context, str) and context:
        verdict.context.append(context)
    if "updatedMCPToolOutput" in specific:
        verdict.updated_output = specific["updatedMCPToolOutput"]
    answer = specific.get("decision")
    if isinstance(answer, dict) and answer.get("behavior") in ("allow", "deny"):
        if verdict.answer is None or answer["behavior"] == "deny":
            verdict.answer = answer


def _rank(verdict: Verdict, permission: Literal["allow", "deny", "ask"], reason: str) -> None:
    if RANK[permission] > RANK[verdict.permission]:
        verdict.permission, verdict.reason = permission, reason


def session_hooks(session: AgentSession) -> Hooks | None:
    base = {
        "session_id": session.spec.session_id,
        "transcript_path": "",
        "cwd": str(session.spec.cwd),
        "permission_mode": session.permissions.mode,
    }
    return Hooks.of(session.tool_ctx.config, base)


def with_context(text: str, verdict: Verdict) -> str:
    """A tool result or prompt with what the hooks added for the model."""
    notes = [*verdict.context, *([f"A hook says: {verdict.block}"] if verdict.block else [])]
    return "\n\n".join([text, *notes]) if notes else text

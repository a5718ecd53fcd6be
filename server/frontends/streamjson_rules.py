"""`can_use_tool` permission suggestions and the host's `updatedPermissions`, in Claude Code's
rule shape: the one suggestion is the rule agentls remembers when the host allows always."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import ValidationError

from protocol.methods import PermissionOption, ToolCallRef
from server.permissions import rule_key
from server.tools.base import Tool
from server.tools.names import CLAUDE_CODE_NAMES


@cache
def _builtin() -> dict[str, Tool]:
    from server.tools.registry import tools_by_name

    return tools_by_name()


def suggestions(call: ToolCallRef, options: list[PermissionOption]) -> list[dict[str, Any]]:
    if not any(o.kind == "allow_always" for o in options):
        return []  # this call is asked every time
    rule = {"toolName": CLAUDE_CODE_NAMES.get(call.name, call.name)}
    content = _rule_content(call)
    if content:
        rule["ruleContent"] = content
    return [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}]


def _rule_content(call: ToolCallRef) -> str:
    """`bash(git status)` -> `git status:*`, `web_fetch(x.com)` -> `domain:x.com`."""
    tool = _builtin().get(call.name)
    if tool is None:
        return ""
    try:
        key = rule_key(tool, tool.Input.model_validate(call.input))
    except ValidationError:
        return ""
    if "(" not in key:
        return ""
    inner = key[key.index("(") + 1 : -1]
    return f"domain:{inner}" if tool.kind == "fetch" else f"{inner}:*"


def adds_allow_rule(updates: Any) -> bool:
    """Whether the host's `updatedPermissions` add (or replace with) an allow rule."""
    return isinstance(updates, list) and any(
        isinstance(u, dict)
        and u.get("type") in ("addRules", "replaceRules")
        and u.get("behavior") == "allow"
        and u.get("rules")
        for u in updates
    )

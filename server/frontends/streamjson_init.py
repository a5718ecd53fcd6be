"""The `initialize` control request, read field by field through the table in
`streamjson_surface`: what it honours becomes the session's config before the session opens,
what it refuses becomes a warning for the user and, where the SDK asks, an `*_applied: false`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, assert_never

from server.agent.hooks import EVENTS
from server.agent.profiles import MODEL_ALIASES
from server.frontends.streamjson_structured import schema_problem
from server.frontends.streamjson_surface import INITIALIZE

APPLIED = {
    "hooks": "hooks_applied",
    "settings": "settings_applied",
    "disallowedTools": "disallowed_tools_applied",
    "additionalDirectories": "additional_directories_applied",
    "mcpServers": "mcp_servers_applied",
    "plugins": "plugins_applied",
}
"""The answer field an SDK checks for each of these request fields."""
SETTINGS_RULES = ("allow", "deny", "ask")


@dataclass
class Initialized:
    flags: dict[str, Any] = field(default_factory=dict)
    """Config the session opens with, over the run's flags (lists are added to)."""
    notes: list[str] = field(default_factory=list)
    answer: dict[str, Any] = field(default_factory=dict)
    """Fields of the `initialize` answer."""
    hooks: dict[str, Any] | None = None


def read_initialize(request: dict[str, Any]) -> Initialized:
    out = Initialized()
    for key, value in request.items():
        item = INITIALIZE.get(key)
        if item is None:
            out.notes.append(f"agentls does not know the initialize field {key!r}: ignored")
            continue
        if value is None:
            continue
        applied = APPLIED.get(key)
        match item.status:
            case "honoured":
                APPLY[key](value, out)
                if applied:
                    out.answer[applied] = True
            case "refused":
                if item.note not in out.notes:
                    out.notes.append(item.note)
                if applied:
                    out.answer[applied] = False
            case "inert":
                pass
            case _:
                assert_never(item.status)
    return out


def too_late(request: dict[str, Any]) -> Initialized:
    """A second `initialize`: the session is open, nothing in it can be applied."""
    out = Initialized()
    given = [k for k, v in request.items() if k != "subtype" and v is not None]
    if given:
        out.notes.append(f"initialize after the session opened: {', '.join(given)} not applied")
    out.answer = {APPLIED[k]: False for k in given if k in APPLIED}
    return out


def merged(flags: dict[str, Any], added: dict[str, Any]) -> dict[str, Any]:
    """`flags` with `added` over it, lists joined (rules and tool lists add up)."""
    out = dict(flags)
    for key, value in added.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = merged(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            out[key] = [*old, *(v for v in value if v not in old)]
        else:
            out[key] = value
    return out


def _system_prompt(value: Any, out: Initialized) -> None:
    parts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    text = "\n\n".join(p for p in parts if isinstance(p, str) and p)
    if text:
        out.flags["systemPrompt"] = text


def _append(value: Any, out: Initialized) -> None:
    if isinstance(value, str) and value:
        out.flags["appendSystemPrompt"] = value


def _disallowed(value: Any, out: Initialized) -> None:
    names = [n for n in value if isinstance(n, str)] if isinstance(value, list) else []
    out.flags = merged(out.flags, {"tools": {"disallowed": names}})


def _mcp_servers(value: Any, out: Initialized) -> None:
    if isinstance(value, dict):
        out.flags = merged(out.flags, {"mcpServers": value})


def read_settings(value: Any, out: Initialized) -> None:
    """Claude Code settings (`--settings`, `settings` in initialize): the permission rules."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            out.notes.append("the settings are not JSON: not applied")
            return
    if not isinstance(value, dict):
        return
    found = value.get("permissions")
    perms: dict[str, Any] = found if isinstance(found, dict) else {}
    rules = {k: perms[k] for k in SETTINGS_RULES if isinstance(perms.get(k), list)}
    out.flags = merged(out.flags, {"permissions": rules})
    ignored = [f"permissions.{k}" for k in perms if k not in SETTINGS_RULES]
    ignored += [k for k in value if k != "permissions"]
    if ignored:
        out.notes.append(f"settings not applied: {', '.join(ignored)}")


def _hooks(value: Any, out: Initialized) -> None:
    if not isinstance(value, dict):
        return
    out.hooks = {k: v for k, v in value.items() if k in EVENTS}
    out.answer["hook_on_failure_supported"] = True
    others = sorted(k for k in value if k not in EVENTS)
    if others:
        out.notes.append(f"hooks for {', '.join(others)} are not called back")


def _sdk_servers(value: Any, out: Initialized) -> None:
    names = [n for n in value if isinstance(n, str)] if isinstance(value, list) else []
    out.flags = merged(out.flags, {"mcpServers": {n: {"type": "sdk"} for n in names}})


def _json_schema(value: Any, out: Initialized) -> None:
    problem = schema_problem(value)
    if problem:
        out.notes.append(f"{problem}: no structured output")
    else:
        out.flags["structuredOutput"] = value


AGENT_FIELDS = ("description", "prompt", "tools", "disallowedTools", "model", "maxTurns")


def read_agents(value: Any, out: Initialized) -> None:
    """The SDKs' `agents` (initialize, `--agents`): subagent profiles for the `task` tool."""
    if not isinstance(value, dict):
        return
    out.flags = merged(out.flags, {"sdkAgents": value})
    for name, entry in value.items():
        if not isinstance(entry, dict):
            continue
        unused = sorted(k for k in entry if k not in AGENT_FIELDS)
        if unused:
            out.notes.append(f"agent {name}: {', '.join(unused)} not applied")
        if entry.get("model") in MODEL_ALIASES:
            out.notes.append(f"agent {name}: model {entry['model']!r} runs the session's model")


APPLY: dict[str, Callable[[Any, Initialized], None]] = {
    "agents": read_agents,
    "jsonSchema": _json_schema,
    "sdkMcpServers": _sdk_servers,
    "hooks": _hooks,
    "systemPrompt": _system_prompt,
    "appendSystemPrompt": _append,
    "disallowedTools": _disallowed,
    "mcpServers": _mcp_servers,
    "settings": read_settings,
}

"""Permission policy: which tool calls run freely, which ask the user, which are refused.

Modes: `default` (reads free; edits, writes, shell, fetch ask), `plan` (read-only tools only),
`acceptEdits` (file edits free, shell still asks), `bypassPermissions` (nothing asks). Some calls
ask whatever the mode: `rm -rf`, `.env*` files, paths outside the workspace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from protocol.methods import PermissionOption
from server.tools.base import Tool, ToolContext

MODES = ("default", "plan", "acceptEdits", "bypassPermissions")
MODE_DESCRIPTIONS = {
    "default": "Ask before edits, commands and fetches",
    "plan": "Read-only: the agent may look but not change anything",
    "acceptEdits": "Edit files freely; still ask before commands",
    "bypassPermissions": "Never ask (except for dangerous calls)",
}
EDIT_KINDS = ("edit", "delete", "move")

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
]
ALWAYS_ASK_OPTIONS = [o for o in OPTIONS if o.kind in ("allow_once", "reject_once")]


@dataclass(frozen=True)
class Decision:
    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    rule: str = ""
    """The key an allow-always / reject-always answer is remembered under ('' = not rememberable)."""


@dataclass
class PermissionState:
    mode: str = "default"
    allow_rules: set[str] = field(default_factory=set)
    deny_rules: set[str] = field(default_factory=set)


def rule_key(tool: Tool, args: Any) -> str:
    """Allow-always scope: a shell rule covers commands with the same program, a fetch rule URLs
    on the same host, an edit rule all in-workspace edits by that tool, anything else the tool
    as a whole."""
    command = getattr(args, "command", None)
    if tool.kind == "execute" and isinstance(command, str):
        program = command.strip().split(maxsplit=1)[0] if command.strip() else ""
        return f"{tool.name}({program})"
    url = getattr(args, "url", None)
    if tool.kind == "fetch" and isinstance(url, str):
        return f"{tool.name}({url_host(url)})"
    return tool.name


def url_host(url: str) -> str:
    """The host as the fetch guard sees it (IDNA, IP literals in any notation normalised), so a
    rule and the fetch it allows agree; "" for a URL the guard refuses anyway."""
    from server.tools.ssrf import UnsafeURL, normalize_host, parse_url

    try:
        return str(normalize_host(parse_url(url.strip()).raw_host.decode("ascii")))
    except UnsafeURL:
        return ""


def outside_workspace(tool: Tool, args: Any, ctx: ToolContext) -> str | None:
    for raw in tool.paths(args):
        path = ctx.resolve(raw)
        if not ctx.inside_workspace(path):
            return f"path outside the workspace: {Path(path)}"
    return None


def inside_git_dir(tool: Tool, args: Any, ctx: ToolContext) -> str | None:
    """Writes under .git/ can plant hooks and filters that later run as code."""
    if tool.is_read_only(args):
        return None
    for raw in tool.paths(args):
        if ".git" in ctx.resolve(raw).parts:
            return f"writes inside .git: {raw}"
    return None


def rules_from_names(names: list[str]) -> set[str]:
    """Allow rules from tool names as users write them: `Read`, `bash`, `Bash(npm test:*)`,
    `WebFetch(domain:docs.python.org)`."""
    from server.tools.registry import canonical_name

    rules = set()
    for name in names:
        match = re.fullmatch(r"\s*([\w-]+)\s*(?:\((.*)\))?\s*", name)
        if not match:
            continue
        tool, spec = canonical_name(match.group(1)), (match.group(2) or "").strip()
        if spec.startswith("domain:"):
            spec = url_host(f"https://{spec.removeprefix('domain:').strip()}") or spec
        program = spec.split(":", 1)[0].split(maxsplit=1)[0] if spec and spec != "*" else ""
        rules.add(f"{tool}({program})" if program else tool)
    return rules


def decide(tool: Tool, args: Any, ctx: ToolContext, state: PermissionState) -> Decision:
    if state.mode == "plan" and not tool.is_read_only(args):
        return Decision("deny", "plan mode is read-only: describe the change instead of making it")
    always = (
        tool.always_ask(args)
        or outside_workspace(tool, args, ctx)
        or inside_git_dir(tool, args, ctx)
    )
    if always:
        return Decision("ask", always)
    key = rule_key(tool, args)
    if key in state.deny_rules:
        return Decision("deny", f"the user always rejects {key}")
    free = tool.is_read_only(args) and tool.kind != "fetch"
    allowed = key in state.allow_rules or tool.name in state.allow_rules
    if free or state.mode == "bypassPermissions" or allowed:
        return Decision("allow")
    if state.mode == "acceptEdits" and tool.kind in EDIT_KINDS:
        return Decision("allow")
    return Decision("ask", "", key)


def options_for(decision: Decision) -> list[PermissionOption]:
    return OPTIONS if decision.rule else ALWAYS_ASK_OPTIONS


def remember(state: PermissionState, decision: Decision, kind: str) -> None:
    if not decision.rule:
        return
    if kind == "allow_always":
        state.allow_rules.add(decision.rule)
    elif kind == "reject_always":
        state.deny_rules.add(decision.rule)

"""Permission policy: which tool calls run freely, which ask the user, which are refused.

Each call is first described as its effect (`Effect`: the paths it reads and writes, the shell
command it runs), then one function, `decide`, judges that effect against the mode, the rules
and the workspace. Modes: `default` (reads free; edits, writes, shell, fetch ask), `plan`
(read-only tools only), `acceptEdits` (file edits free, shell still asks), `bypassPermissions`
(nothing asks but the always-ask calls). Always ask, in every mode: recursive deletes, `.env*`
files, writes into `.git`, paths outside the workspace, files with other hard links. Ask in
every mode but bypass: writes to control files (`server.policy.paths.control_file`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from protocol.methods import PermissionMode, PermissionOption
from protocol.updates import WorkspaceTrust
from server.policy import paths as real_paths
from server.policy.guards import command_guard
from server.policy.sandboxed import leaving
from server.policy.shell import covered, parse, prefix
from server.skills import SkillCatalog, ungranted
from server.tools.base import Tool, ToolContext
from server.tools.names import canonical_name
from server.tools.sandbox_mounts import home_of
from server.trust import verdict

MODES = ("default", "plan", "acceptEdits", "bypassPermissions")
MODE_DESCRIPTIONS: dict[PermissionMode, str] = {
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
    more: tuple[str, ...] = ()
    """Further keys remembered with `rule` (one per simple command of a compound command)."""
    outside: bool = False
    """The command visibly needs more than the sandbox gives: if it runs, it runs outside."""

    @property
    def rules(self) -> tuple[str, ...]:
        return (self.rule, *self.more) if self.rule else ()


@dataclass
class PermissionState:
    mode: str = "default"
    allow_rules: set[str] = field(default_factory=set)
    deny_rules: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Effect:
    """What one call will do, as the policy judges it. Paths are absolute as written (for
    messages); every rule looks at their real location."""

    reads: tuple[Path, ...] = ()
    writes: tuple[Path, ...] = ()
    command: str | None = None
    """A shell command line, parsed by the policy."""
    cwd: Path | None = None
    """Where the command runs."""


def describe(tool: Tool, args: Any, ctx: ToolContext) -> Effect:
    """The call's effect; records the real paths it judges in `ctx.judged`."""
    touched = tuple(ctx.resolve(p) for p in tool.paths(args))
    for path in touched:
        target = real_paths.real(path)
        if target is not None:
            ctx.judged[path] = target
            if real_paths.hard_linked(target):
                ctx.shared.add(target)
    command = getattr(args, "command", None) if tool.shell else None
    cwd = touched[0] if tool.shell and touched else ctx.cwd
    if tool.shell:
        return Effect(reads=touched, command=command, cwd=cwd)
    if tool.is_read_only(args):
        return Effect(reads=touched)
    return Effect(writes=touched)


def rule_key(tool: Tool, args: Any) -> str:
    """Allow-always scope: a shell rule covers commands starting with the same program and
    subcommand, a git rule the same subcommand, a fetch rule URLs on the same host, an edit
    rule all in-workspace edits by that tool, anything else the tool as a whole."""
    command = getattr(args, "command", None)
    if tool.kind == "execute" and isinstance(command, str):
        if tool.shell:
            parsed = parse(command)
            first = parsed.commands[0] if parsed and parsed.commands else None
            return f"{tool.name}({prefix(first)})" if first and first.words else ""
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


def path_guard(effect: Effect, ctx: ToolContext) -> str | None:
    """Always-ask reasons from the paths, judged on where they really lead: the real paths
    `describe` recorded, which the file tools then open (never resolved a second time)."""
    for path in (*effect.reads, *effect.writes):
        parts = _judged_parts(path, ctx)
        if parts is None:
            return f"path outside the workspace: {path}"
        if real_paths.env_file(_below(path, ctx.cwd)) or real_paths.env_file(parts):
            return f"{_shown(path, ctx)} looks like an environment file and may contain secrets"
    for path in effect.writes:
        parts = _judged_parts(path, ctx) or ()
        if real_paths.git_dir(_below(path, ctx.cwd)) or real_paths.git_dir(parts):
            return f"writes inside .git: {_shown(path, ctx)}"
        if real_paths.hard_linked(ctx.judged.get(path, path)):
            return f"{_shown(path, ctx)} has other hard links: writing it changes those files too"
    if effect.command is not None:
        return command_guard(effect.command, effect.cwd or ctx.cwd)
    return None


def control_guard(effect: Effect, ctx: ToolContext) -> str | None:
    for path in effect.writes:
        parts = _judged_parts(path, ctx) or ()
        name = real_paths.control_file(_below(path, ctx.cwd)) or real_paths.control_file(parts)
        if name:
            return f"{_shown(path, ctx)} is a control file ({name}): it decides what the agent may do"
    return None


def _judged_parts(path: Path, ctx: ToolContext) -> tuple[str, ...] | None:
    return real_paths.workspace_parts(path, ctx.cwd, resolved=ctx.judged.get(path))


def _below(path: Path, root: Path) -> tuple[str, ...]:
    try:
        return path.relative_to(root).parts
    except ValueError:
        return path.parts


def _shown(path: Path, ctx: ToolContext) -> str:
    try:
        return path.relative_to(ctx.cwd).as_posix()
    except ValueError:
        return str(path)


def command_prefixes(rules: set[str], tool: Tool) -> list[str]:
    """The command prefixes of a shell tool's rules (`bash(git status)` -> `git status`)."""
    head = f"{tool.name}("
    found = [r[len(head) : -1] for r in rules if r.startswith(head) and r.endswith(")")]
    return [p for p in found if p.strip()]


def _rejected(tool: Tool, effect: Effect, state: PermissionState) -> str | None:
    parsed = parse(effect.command or "")
    for rule in command_prefixes(state.deny_rules, tool):
        if parsed and any(covered(rule, c) for c in parsed.commands):
            return f"{tool.name}({rule})"
    return None


def judge_command(tool: Tool, effect: Effect, prefixes: list[str], ctx: ToolContext) -> Decision:
    """Allow when every simple command is covered by a prefix rule and nothing else runs;
    otherwise ask, naming what is not covered."""
    command = effect.command or ""
    parsed = parse(command)
    if parsed is None:
        reason = "the command could not be parsed, so no allow rule covers it" if prefixes else ""
        return Decision("ask", reason)
    blockers = list(parsed.constructs)
    cwd = effect.cwd or ctx.cwd
    for target in parsed.redirects:
        if target == "/dev/null":
            continue
        parts = real_paths.workspace_parts(cwd / Path(target).expanduser(), ctx.cwd)
        if parts is None or real_paths.control_file(parts):
            blockers.append(f"a redirection to {target}")
    missing = [c for c in parsed.commands if c.words and not any(covered(p, c) for p in prefixes)]
    if not missing and not blockers and parsed.commands:
        return Decision("allow")
    keys = [] if blockers else list(dict.fromkeys(f"{tool.name}({prefix(c)})" for c in missing))
    shown = [f"`{c.text}`" for c in missing] + blockers
    reason = f"not covered by an allow rule: {', '.join(shown)}" if prefixes or blockers else ""
    return Decision("ask", reason, keys[0] if keys else "", tuple(keys[1:]))


def offered_in_plan(tool: Tool) -> bool:
    """Plan mode offers the local tools that can read: not edits, not the web. Commands stay,
    as many (`ls`, `git log`) only read; `decide` refuses the others."""
    return tool.kind not in (*EDIT_KINDS, "fetch")


def decide(
    tool: Tool,
    args: Any,
    ctx: ToolContext,
    state: PermissionState,
    *,
    granted: set[str] | frozenset[str] = frozenset(),
) -> Decision:
    """The one decision. `granted`: allow rules of the skills active in this turn."""
    if state.mode == "plan" and not tool.is_read_only(args):
        return Decision("deny", "plan mode is read-only: describe the change instead of making it")
    if state.mode == "plan" and not offered_in_plan(tool):
        return Decision("deny", "plan mode uses local read-only tools only: plan without the web")
    effect = describe(tool, args, ctx)
    always = tool.always_ask(args) or path_guard(effect, ctx)
    if always:
        return sandboxed(tool, args, effect, ctx, state, Decision("ask", always), always=True)
    if state.mode != "bypassPermissions":
        control = control_guard(effect, ctx)
        if control:
            return Decision("ask", control)
    key = rule_key(tool, args)
    rejected = _rejected(tool, effect, state) if effect.command is not None else None
    if rejected or (key and key in state.deny_rules):
        return Decision("deny", f"the user always rejects {rejected or key}")
    free = tool.is_read_only(args) and tool.kind != "fetch"
    rules = state.allow_rules | set(granted)
    if free or state.mode == "bypassPermissions" or tool.name in rules:
        by_rule = tool.name in rules
        return sandboxed(tool, args, effect, ctx, state, Decision("allow"), by_rule=by_rule)
    if effect.command is not None:
        judged = judge_command(tool, effect, command_prefixes(rules, tool), ctx)
        return sandboxed(tool, args, effect, ctx, state, judged)
    if key in rules:
        return Decision("allow")
    if state.mode == "acceptEdits" and tool.kind in EDIT_KINDS:
        return Decision("allow")
    return Decision("ask", "", key)


def sandboxed(
    tool: Tool,
    args: Any,
    effect: Effect,
    ctx: ToolContext,
    state: PermissionState,
    judged: Decision,
    *,
    always: bool = False,
    by_rule: bool = True,
) -> Decision:
    """`judged` for a command in a sandbox: one that visibly needs to leave it asks and runs
    outside when allowed (or when the user's own allow rule covers it; bypass mode alone keeps
    it inside); with `sandbox.autoAllow`, one that stays inside runs unasked in `default` and
    `acceptEdits` (what always asks still asks)."""
    sandbox = ctx.sandbox
    if effect.command is None or not tool.shell or sandbox is None or not sandbox.active:
        return judged
    if getattr(args, "outside_sandbox", False):
        if judged.action == "allow":
            return judged
        return replace(judged, reason=_joined(judged.reason, "it asks to run outside the sandbox"))
    cwd = effect.cwd or ctx.cwd
    exit_reason = leaving(
        effect.command,
        cwd=cwd,
        workspace=ctx.cwd,
        settings=sandbox.settings,
        secrets=sandbox.secrets(),
        home=home_of(sandbox.environ),
    )
    if exit_reason:
        if judged.action == "allow":
            return replace(judged, outside=by_rule)
        reason = f"{exit_reason}; if allowed, it runs outside the sandbox"
        return replace(judged, reason=_joined(judged.reason, reason), outside=True)
    if always:
        return judged
    if sandbox.settings.auto_allow and state.mode in ("default", "acceptEdits"):
        unheld = sandbox.unheld()
        if unheld is None:
            return Decision("allow")
        if judged.action != "allow":
            reason = f"it would run unasked in the sandbox, but {unheld}"
            return replace(judged, reason=_joined(judged.reason, reason))
    return judged


def _joined(*reasons: str) -> str:
    return "; ".join(r for r in reasons if r)


def rules_from_names(names: list[str]) -> set[str]:
    """Allow rules from tool names as users write them: `Read`, `bash`, `Bash(npm test:*)`,
    `WebFetch(domain:docs.python.org)`."""
    rules = set()
    for name in names:
        match = re.fullmatch(r"\s*([\w-]+)\s*(?:\((.*)\))?\s*", name)
        if not match:
            continue
        tool, spec = canonical_name(match.group(1)), (match.group(2) or "").strip()
        if spec.startswith("domain:"):
            spec = url_host(f"https://{spec.removeprefix('domain:').strip()}") or spec
        rules.add(f"{tool}({_spec_prefix(tool, spec)})" if _spec_prefix(tool, spec) else tool)
    return rules


def _spec_prefix(tool: str, spec: str) -> str:
    """`git status:*` -> `git status` for the shell; other tools keep their first word."""
    if not spec or spec == "*":
        return ""
    head = spec.removesuffix(":*").removesuffix("*").strip()
    if tool == "bash":
        return " ".join(head.split())
    return head.split(":", 1)[0].split(maxsplit=1)[0] if head.split() else ""


def options_for(decision: Decision) -> list[PermissionOption]:
    return OPTIONS if decision.rule else ALWAYS_ASK_OPTIONS


def remember(state: PermissionState, decision: Decision, kind: str) -> None:
    if kind == "allow_always":
        state.allow_rules.update(decision.rules)
    elif kind == "reject_always":
        state.deny_rules.update(decision.rules)


def trust_notice(
    cwd: Path, config: dict[str, Any], skills: SkillCatalog | None, *, broad: bool = False
) -> WorkspaceTrust | None:
    """What an untrusted workspace asked for and did not get, for the client to show; always
    said for a `broad` workspace (the home folder or above), where every command asks."""
    trusted, ignored = verdict(config)
    if trusted and not broad:
        return None
    if not trusted:
        ignored += [f"skill {name}: allowed-tools" for name in ungranted(skills)]
    if not ignored and not broad:
        return None
    return WorkspaceTrust(trusted=trusted, cwd=str(cwd), ignored=ignored, broad=broad or None)

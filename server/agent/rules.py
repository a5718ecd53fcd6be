"""Claude Code permission rules that deny or force a question: `Tool`, `Bash(rm:*)`,
`Bash(git push)`, `Read(./secrets/**)`, `Edit(//etc/**)`, `WebFetch(domain:x.com)`,
`mcp__db`, `Task(explorer)`, `Skill(name)`.

They come from `permissions.deny` / `permissions.ask` and from the entries of
`tools.disallowed` (`--disallowedTools`) that name a specifier. Commands are judged on what
bash parses (`server.policy.shell`), paths on where they really lead. What a rule cannot be
told apart from (an unparsable line, `sh -c`, `eval`, a substitution) asks instead of running.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, Literal

from server.permissions import Decision, url_host
from server.policy import paths as real_paths
from server.policy.shell import SimpleCommand, parse
from server.tools.base import Tool, ToolContext
from server.tools.names import canonical_name

READERS = {"read_file", "grep", "glob", "list_dir"}
EDITORS = {"write_file", "edit_file", "edit_file_hashed"}
PATH_RULES = {
    "read_file": READERS,
    "write_file": EDITORS,
    "edit_file": EDITORS,
    "MultiEdit": EDITORS,
    "NotebookEdit": EDITORS,
}
"""A `Read(...)` rule covers every tool that reads files, `Edit(...)`/`Write(...)` every one
that writes them, as in Claude Code."""


@dataclass(frozen=True)
class Rule:
    tool: str
    """Our name of the tool (`bash`), or an MCP name (`mcp__db`, `mcp__db__query`)."""
    spec: str
    """What is inside the parentheses; "" for the whole tool."""
    text: str
    """The rule as the user wrote it, for messages."""


def parse_rules(names: Any) -> list[Rule]:
    rules = []
    for name in names if isinstance(names, list) else []:
        if not isinstance(name, str):
            continue
        match = re.fullmatch(r"\s*([\w.*-]+)\s*(?:\((.*)\))?\s*", name, re.S)
        if match:
            spec = (match.group(2) or "").strip()
            rules.append(Rule(canonical_name(match.group(1)), "" if spec == "*" else spec, name))
    return rules


def configured(config: dict[str, Any]) -> tuple[list[Rule], list[Rule]]:
    """(deny rules, ask rules) of a session's config."""
    perms = config.get("permissions") or {}
    tools = config.get("tools") or {}
    named = [n for n in tools.get("disallowed") or [] if isinstance(n, str) and "(" in n]
    deny = parse_rules(perms.get("deny")) + parse_rules(named)
    return deny, parse_rules(perms.get("ask"))


Match = Literal["yes", "no", "unsure"]


def allows(tool: Tool, args: Any, ctx: ToolContext) -> str | None:
    """The allow rule naming paths (`Edit(src/**)`, `Read(./docs/**)`) that covers every path
    of the call, if one does. Command and domain allow rules are the policy's own
    (`permissions.rules_from_names`)."""
    perms = ctx.config.get("permissions") or {}
    for rule in parse_rules(perms.get("allow")):
        if rule.spec and rule.tool in PATH_RULES and tool.paths(args):
            if matches(rule, tool, args, ctx) == "yes" and _every_path(rule, tool, args, ctx):
                return rule.text
    return None


def _every_path(rule: Rule, tool: Tool, args: Any, ctx: ToolContext) -> bool:
    pattern = _anchored(rule.spec, ctx.cwd)
    for written in tool.paths(args):
        path = ctx.resolve(written)
        real = real_paths.real(path)
        if real is None or not any(
            _path_matches(pattern, c) for c in {real, *_real_cwd(path, ctx.cwd)}
        ):
            return False
    return True


def judge(tool: Tool, args: Any, ctx: ToolContext) -> Decision | None:
    """`deny` when a deny rule covers the call, `ask` when an ask rule does (or when a deny
    rule cannot be ruled out), None when no rule speaks."""
    deny, ask = configured(ctx.config)
    unsure = ""
    for rule in deny:
        found = matches(rule, tool, args, ctx)
        if found == "yes":
            return Decision("deny", f"the rule {rule.text} denies it")
        if found == "unsure":
            unsure = unsure or rule.text
    for rule in ask:
        if matches(rule, tool, args, ctx) != "no":
            return Decision("ask", f"the rule {rule.text} asks first")
    if unsure:
        return Decision("ask", f"agentls cannot tell whether the deny rule {unsure} covers it")
    return None


def matches(rule: Rule, tool: Tool, args: Any, ctx: ToolContext) -> Match:
    if not _names(rule, tool):
        return "no"
    if not rule.spec:
        return "yes"
    if tool.shell:
        return _command(rule.spec, getattr(args, "command", None))
    if rule.tool in PATH_RULES:
        return _paths(rule.spec, tool, args, ctx)
    if tool.kind == "fetch":
        return _domain(rule.spec, getattr(args, "url", None))
    if tool.name == "task":
        wanted = getattr(args, "subagent_type", None) or getattr(args, "profile", None)
        return "yes" if wanted in (None, rule.spec) else "no"
    if tool.name == "skill":
        return "yes" if str(getattr(args, "skill", "")).lower() == rule.spec.lower() else "no"
    return "yes"  # a specifier agentls does not read: the rule covers the whole tool


def _names(rule: Rule, tool: Tool) -> bool:
    if rule.tool in PATH_RULES:
        return tool.name in PATH_RULES[rule.tool] or tool.name == rule.tool
    if rule.tool.startswith("mcp__") and tool.name.startswith("mcp__"):
        server = rule.tool.removesuffix("__*")
        return tool.name == server or tool.name.startswith(server + "__")
    return tool.name == rule.tool


def _command(spec: str, command: Any) -> Match:
    if not isinstance(command, str):
        return "yes"
    parsed = parse(command)
    if parsed is None:
        return "unsure"
    if any(_covers(spec, simple) for simple in parsed.commands):
        return "yes"
    return "unsure" if parsed.constructs else "no"


def _covers(spec: str, simple: SimpleCommand) -> bool:
    """`rm:*` (any command starting with `rm`), `git push` (that command exactly),
    `git * main` (a glob over the whole command); the program is also compared by its file
    name, so `/bin/rm` is `rm`."""
    words = list(simple.words)
    if not words:
        return False
    forms = [words, [PurePath(words[0]).name, *words[1:]]]
    if spec.endswith(":*"):
        wanted = spec.removesuffix(":*").split()
        return any(w[: len(wanted)] == wanted for w in forms)
    if "*" in spec:
        return any(fnmatch.fnmatchcase(" ".join(w), spec) for w in forms)
    return any(w == spec.split() for w in forms)


def _domain(spec: str, url: Any) -> Match:
    if not spec.startswith("domain:"):
        return "yes"
    if not isinstance(url, str):
        return "yes"
    host, wanted = url_host(url), spec.removeprefix("domain:").strip().lower()
    if not host:
        return "unsure"
    if wanted.startswith("*."):
        return "yes" if host.endswith(wanted[1:]) else "no"
    return "yes" if host == wanted else "no"


def _paths(spec: str, tool: Tool, args: Any, ctx: ToolContext) -> Match:
    pattern = _anchored(spec, ctx.cwd)
    for written in tool.paths(args):
        path = ctx.resolve(written)
        candidates = {path, real_paths.real(path) or path, *_real_cwd(path, ctx.cwd)}
        if any(_path_matches(pattern, c) for c in candidates):
            return "yes"
    return "no"


def _real_cwd(path: Path, cwd: Path) -> list[Path]:
    """The path below the workspace's real location, so a rule written against the workspace
    as the user sees it matches however the workspace itself is reached."""
    real_cwd, real_path = real_paths.real(cwd), real_paths.real(path)
    if real_cwd is None or real_path is None:
        return []
    try:
        return [cwd / real_path.relative_to(real_cwd)]
    except ValueError:
        return []


def _anchored(spec: str, cwd: Path) -> str:
    """Claude Code's path forms: `//abs`, `~/home`, `/project-root`, `./rel` or `rel`."""
    if spec.startswith("//"):
        return spec[1:]
    if spec.startswith("~/"):
        return str(Path.home()) + spec[1:]
    if spec.startswith("/"):
        return str(cwd) + spec
    rest = spec.removeprefix("./")
    if "/" not in rest.rstrip("/"):
        return str(cwd) + "/**/" + rest  # gitignore: a bare name matches at any depth
    return f"{cwd}/{rest}"


def _path_matches(pattern: str, path: Path) -> bool:
    """Gitignore-style: `*` within a name, `**` across folders; a match on a folder covers
    everything beneath it."""
    regex = _glob_regex(pattern.rstrip("/") or "/")
    probe = PurePosixPath(path.as_posix())
    return any(regex.fullmatch(str(p)) for p in (probe, *probe.parents))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("/**/", i):
            out.append("(?:/.*)?/")
            i += 4
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))

"""Claude Code's own command-line flags as agentls reads them (the print/stream-json run):
the permission modes the SDKs send, `--tools`, `--system-prompt-file`, and `auth status`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Literal, TextIO

from protocol.methods import PermissionMode
from server.frontends.streamjson_init import Initialized, merged, read_agents, read_settings
from server.frontends.streamjson_structured import schema_problem
from server.frontends.streamjson_surface import FLAGS, PARSED_ELSEWHERE, dest
from server.tools.names import CLAUDE_CODE_NAMES, canonical_name

ClaudeMode = Literal["default", "plan", "acceptEdits", "bypassPermissions", "dontAsk", "auto"]
CLAUDE_MODES: tuple[ClaudeMode, ...] = (
    "default",
    "plan",
    "acceptEdits",
    "bypassPermissions",
    "dontAsk",
    "auto",
)
DOOR_MODES = ("dontAsk", "auto")
"""Modes the door keeps itself; the session runs in `default` under them."""

AUTO_REFUSED = (
    "Permission mode 'auto' (a classifier approves calls) is not available in agentls: "
    "running in 'default', which asks before edits, commands and fetches."
)

OTHER_BUILTINS = ("list_dir", "kill_task", "search_sessions", "task_output")


def add_flags(parser: argparse.ArgumentParser) -> None:
    """`--tools`, `--system-prompt-file`, and every other flag of the table the print parser
    does not define itself (accepted, and warned about when refused)."""
    parser.add_argument(
        "--tools",
        help="the built-in tools offered: a comma list of names, '' for none, 'default' for all",
    )
    parser.add_argument("--system-prompt-file", help="replace the system prompt with a file's text")
    for flag, item in FLAGS.items():
        if flag in PARSED_ELSEWHERE:
            continue
        if item.value:
            parser.add_argument(flag, dest=dest(flag), action="append", help=argparse.SUPPRESS)
        else:
            parser.add_argument(flag, dest=dest(flag), action="store_true", help=argparse.SUPPRESS)


def warnings(args: argparse.Namespace, dropped: list[str]) -> list[str]:
    """What the run was asked for and will not do, for the user (`system/informational`)."""
    notes = [
        item.note
        for flag, item in FLAGS.items()
        if flag not in PARSED_ELSEWHERE and item.status == "refused" and getattr(args, dest(flag))
    ]
    try:
        settings = settings_of(args)
    except ValueError:
        settings = None  # `flags` says why and the run ends
    notes += settings.notes if settings else []
    try:
        agents = agents_of(args)
    except ValueError:
        agents = None
    notes += agents.notes if agents else []
    unknown = [a for a in dropped if a.startswith("-")]
    if unknown:
        notes.append(f"agentls does not know {', '.join(unknown)}: ignored")
    return notes


def session_mode(mode: str | None) -> PermissionMode | None:
    """The session's own mode for a Claude Code mode (`dontAsk` and `auto` run as `default`)."""
    match mode:
        case None:
            return None
        case "dontAsk" | "auto":
            return "default"
        case "default" | "plan" | "acceptEdits" | "bypassPermissions":
            return mode
    raise ValueError(f"unknown permission mode {mode!r}")


def flags(args: argparse.Namespace, cwd: Path, base: dict[str, Any]) -> dict[str, Any]:
    """`base` with what `--tools` and `--system-prompt-file` add; ValueError says what is
    wrong."""
    out = {**base}
    tools = getattr(args, "tools", None)
    if tools is not None and tools.strip() != "default":
        kept = {canonical_name(n.strip()) for n in tools.split(",") if n.strip()}
        section = {**(out.get("tools") or {})}
        section["disallowed"] = [*section.get("disallowed", []), *sorted(all_builtins() - kept)]
        out["tools"] = section
    agents = agents_of(args)
    if agents is not None:
        out = merged(out, agents.flags)
    sources = getattr(args, dest("--setting-sources"), None)
    if sources is not None:
        read = setting_sources(sources[-1], cwd, Path.home())
        out = merged(out, {**read.flags, "sdkNotes": read.notes})
    thinking = getattr(args, dest("--thinking"), None) or []
    tokens = getattr(args, dest("--max-thinking-tokens"), None) or []
    if tokens:
        try:
            out["sdkThinking"] = int(tokens[-1])
        except ValueError:
            raise ValueError(f"--max-thinking-tokens takes a number, not {tokens[-1]!r}") from None
    elif thinking and thinking[-1] in ("adaptive", "disabled"):
        out["sdkThinking"] = thinking[-1]
    efforts = getattr(args, dest("--effort"), None) or []
    if efforts and efforts[-1] in EFFORTS and "sdkThinking" not in out:
        out["sdkThinking"] = efforts[-1]
    if getattr(args, dest("--include-hook-events"), False):
        out["sdkHookEvents"] = True
    if getattr(args, dest("--fork-session"), False):
        out["forkSession"] = True
    budgets = getattr(args, dest("--max-budget-usd"), None)
    if budgets:
        try:
            out["maxBudgetUsd"] = float(budgets[-1])
        except ValueError:
            raise ValueError(f"--max-budget-usd takes a number, not {budgets[-1]!r}") from None
    settings = settings_of(args)
    if settings is not None:
        out = merged(out, settings.flags)
    schemas = getattr(args, dest("--json-schema"), None)
    if schemas:
        try:
            schema = json.loads(schemas[-1])
        except json.JSONDecodeError as exc:
            raise ValueError(f"--json-schema is not JSON: {exc}") from exc
        problem = schema_problem(schema)
        if problem:
            raise ValueError(f"--json-schema: {problem}")
        out["structuredOutput"] = schema
    path = getattr(args, "system_prompt_file", None)
    if path:
        try:
            out["systemPrompt"] = (cwd / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--system-prompt-file {path}: {exc}") from exc
    return out


EFFORTS = {"low": "think", "medium": "think", "high": "hard", "xhigh": "ultra", "max": "ultra"}
"""Claude Code's effort levels as agentls's thinking levels (`low` has none of its own)."""


def thinking_options(tokens: Any) -> dict[str, Any] | None:
    """Claude Code's thinking budget (`--max-thinking-tokens`, `set_max_thinking_tokens`,
    `--thinking`) as prompt options: 0 or `disabled` turns thinking off, a number sets the
    budget, `adaptive` turns it on; None leaves the config's choice."""
    if tokens == "disabled" or tokens == 0:
        return {"think": False}
    if tokens == "adaptive":
        return {"think": True}
    if tokens in EFFORTS:
        return {"think": EFFORTS[tokens]}
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        return {"thinkingBudget": tokens}
    return None


def settings_of(args: argparse.Namespace) -> Initialized | None:
    """`--settings` (JSON text or a file holding it) as the config it adds and the notes."""
    values = getattr(args, dest("--settings"), None)
    if not values:
        return None
    text = values[-1]
    if not text.lstrip().startswith("{"):
        try:
            text = Path(text).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--settings {values[-1]}: {exc}") from exc
    out = Initialized()
    read_settings(text, out)
    return out


SETTING_FILES = {
    "user": lambda cwd, home: home / ".claude" / "settings.json",
    "project": lambda cwd, home: cwd / ".claude" / "settings.json",
    "local": lambda cwd, home: cwd / ".claude" / "settings.local.json",
}


def setting_sources(value: str, cwd: Path, home: Path) -> Initialized:
    """`--setting-sources user,project,local`: the permission rules of Claude Code's settings
    files. A project's files (committed or local) may only narrow: their allow rules are not
    taken (agentls takes a project's allow rules only from a trusted .agentls/config.json)."""
    out = Initialized()
    names = [n.strip() for n in value.split(",") if n.strip()]
    for name in names:
        where = SETTING_FILES.get(name)
        if where is None:
            out.notes.append(f"setting source {name!r} is not known: not read")
            continue
        path = where(cwd, home)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            out.notes.append(f"{path}: {exc}")
            continue
        read = Initialized()
        read_settings(text, read)
        rules = dict(read.flags.get("permissions") or {})
        if name != "user" and rules.pop("allow", None):
            out.notes.append(f"{path}: allow rules not applied (a project's settings only narrow)")
        out.flags = merged(out.flags, {"permissions": rules})
        out.notes += [f"{path}: {note}" for note in read.notes]
    if "project" not in names:
        out.notes.append(
            "the project's AGENTS.md and CLAUDE.md still load: setting sources do not choose them"
        )
    return out


def agents_of(args: argparse.Namespace) -> Initialized | None:
    values = getattr(args, dest("--agents"), None)
    if not values:
        return None
    try:
        value = json.loads(values[-1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"--agents is not JSON: {exc}") from exc
    out = Initialized()
    read_agents(value, out)
    return out


def all_builtins() -> set[str]:
    from server.tools.registry import tools_by_name

    return {*tools_by_name(), *CLAUDE_CODE_NAMES, *OTHER_BUILTINS}


def auth_status(argv: list[str], out: TextIO = sys.stdout) -> int:
    """`agentls auth status [--json]`: hosts written for Claude Code check it before starting
    sessions. agentls has no account: it uses the provider keys it is configured with."""
    status = {"loggedIn": False, "authMethod": "none", "apiProvider": "agentls"}
    if "--json" in argv:
        print(json.dumps(status), file=out)
    else:
        print("agentls uses the provider keys in its configuration (no login).", file=out)
    return 0

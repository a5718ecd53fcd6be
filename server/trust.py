"""Workspace trust, as editors have it: a folder is untrusted until the user says otherwise.

The user trusts a folder in their own config (`trustedProjects`, or `mcp.trustedProjects`),
with the `--trust` flag, or through the editor's own workspace trust (`workspaceTrusted` on
`session/new`). Until then the project config may only narrow what the user configured: it
cannot set a permission mode, add allow rules or delete a user value with `null`. A trusted
project may set a mode and add allow rules, never `bypassPermissions`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRUST_KEY = "workspaceTrust"
"""Where the merged config records the verdict: `{trusted, ignored}` (set by `server.config`)."""
PROJECT_KEYS_NEVER = ("trustedProjects", TRUST_KEY, "trust")
# Nulls here keep their meaning (delete a provider default): they widen nothing.
NULL_KEEPING = (("llm", "providerOptions"),)


@dataclass
class Narrowed:
    layer: dict[str, Any]
    ignored: list[str] = field(default_factory=list)


def listed(user: Mapping[str, Any]) -> list[str]:
    entries: list[Any] = []
    for value in (user.get("trustedProjects"), (user.get("mcp") or {}).get("trustedProjects")):
        if isinstance(value, str):
            entries.append(value)
        elif isinstance(value, list):
            entries.extend(value)
    return [str(e) for e in entries if isinstance(e, str | os.PathLike)]


def is_broad(workspace: Path, home: Path) -> bool:
    """A workspace that is `/`, the home folder or a folder above it: too much to hand to
    commands unasked or to trust by a folder rule (the user's shell profile, their agentls
    config, every project)."""
    here = Path(os.path.realpath(workspace))
    mine = Path(os.path.realpath(home))
    return here == Path(here.anchor) or here == mine or here in mine.parents


def trusted_by_user(cwd: Path, user: Mapping[str, Any], home: Path | None = None) -> bool:
    """Whether the user config lists `cwd` or a folder above it, compared as real paths. The
    home folder, `/` and the folders between are never trusted by a rule."""
    try:
        here = cwd.resolve()
    except OSError:
        return False
    if is_broad(here, home or Path.home()):
        return False
    for entry in listed(user):
        if entry == "*":
            return True
        try:
            root = Path(entry).expanduser().resolve()
        except OSError:
            continue
        if any(_same(root, folder) for folder in (here, *here.parents)):
            return True
    return False


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)  # a case-insensitive filesystem spells one folder many ways
    except OSError:
        return False


def narrow(base: Mapping[str, Any], project: Mapping[str, Any], *, trusted: bool) -> Narrowed:
    """The project layer as it may be merged over `base` (defaults and the user config)."""
    out = Narrowed(_drop_nulls(project, ()))
    out.ignored = _nulls(project, ())
    layer = out.layer
    for key in PROJECT_KEYS_NEVER:
        if key in layer:
            del layer[key]
            out.ignored.append(key)
    perms = layer.get("permissions")
    if isinstance(perms, dict):
        mode = perms.get("mode")
        if "mode" in perms and (not trusted or mode == "bypassPermissions"):
            del perms["mode"]
            out.ignored.append(f"permissions.mode ({mode})")
        if "allow" in perms and not trusted:
            del perms["allow"]
            out.ignored.append("permissions.allow")
    tools = layer.get("tools")
    if isinstance(tools, dict) and "disallowed" in tools:
        # A project may disallow more tools, never fewer than the user did.
        mine = list((base.get("tools") or {}).get("disallowed") or [])
        theirs = tools["disallowed"] if isinstance(tools["disallowed"], list) else []
        tools["disallowed"] = mine + [t for t in theirs if t not in mine]
    fetch = layer.get("webFetch")
    if isinstance(fetch, dict) and fetch.get("enabled") is True and not trusted:
        del fetch["enabled"]
        out.ignored.append("webFetch.enabled")
    if isinstance(fetch, dict) and "allowedDomains" in fetch:
        mine = (base.get("webFetch") or {}).get("allowedDomains", ["*"])
        mine = [mine] if isinstance(mine, str) else [str(d) for d in mine or []]
        theirs = fetch["allowedDomains"]
        theirs = [theirs] if isinstance(theirs, str) else theirs
        if not isinstance(theirs, list):
            del fetch["allowedDomains"]
            out.ignored.append("webFetch.allowedDomains (not a list)")
        else:
            # A project may narrow the user's domains, never widen them.
            kept = [str(d) for d in theirs if _domain_within(str(d), mine)]
            wider = [str(d) for d in theirs if str(d) not in kept]
            fetch["allowedDomains"] = kept
            out.ignored.extend(
                f"webFetch.allowedDomains entry {d} (wider than yours)" for d in wider
            )
    if "sandbox" in layer:
        layer["sandbox"] = _narrowed_sandbox(base.get("sandbox"), layer["sandbox"], out.ignored)
    return out


SANDBOX_STRICTNESS = {"off": 0, "workspace-write": 1, "read-only": 2}


def stricter(a: Any, b: Any) -> Any:
    """The stricter of two sandbox modes (an unknown one counts as the loosest)."""
    return a if SANDBOX_STRICTNESS.get(a, -1) >= SANDBOX_STRICTNESS.get(b, -1) else b


def _narrowed_sandbox(mine: Any, theirs: Any, ignored: list[str]) -> dict[str, Any]:
    """A project may make the sandbox stricter, never looser, trusted or not."""
    mine = {"mode": mine} if isinstance(mine, str) else dict(mine or {})
    theirs = {"mode": theirs} if isinstance(theirs, str) else theirs
    if not isinstance(theirs, dict):
        ignored.append("sandbox (not a mode name or an object)")
        return {}
    kept = dict(theirs)
    base_mode = str(mine.get("mode", "workspace-write"))
    mode = str(kept.get("mode"))
    if "mode" in kept and SANDBOX_STRICTNESS.get(mode, -1) < SANDBOX_STRICTNESS.get(base_mode, 1):
        del kept["mode"]
        ignored.append(f"sandbox.mode ({mode})")
    hosts = kept.get("network")
    if hosts == "ask" and mine.get("network") is not True:
        del kept["network"]
        ignored.append("sandbox.network (ask)")
    if isinstance(hosts, list) and not _hosts_within(hosts, mine.get("network", False)):
        del kept["network"]
        ignored.append("sandbox.network (hosts the user does not allow)")
    if "denyRead" in kept:
        # A project may hide more, never less than the user hides.
        mine_deny = [d for d in mine.get("denyRead") or [] if isinstance(d, str)]
        theirs_deny = kept["denyRead"] if isinstance(kept["denyRead"], list) else []
        kept["denyRead"] = mine_deny + [d for d in theirs_deny if d not in mine_deny]
    for key, loose in (("network", True), ("autoAllow", True), ("required", False)):
        default = {"network": False, "autoAllow": True, "required": False}[key]
        if key in kept and kept[key] == loose and mine.get(key, default) != loose:
            del kept[key]
            ignored.append(f"sandbox.{key} ({loose})")
    return kept


def _hosts_within(hosts: list[Any], mine: Any) -> bool:
    """Whether a project's host list only narrows the user's `sandbox.network`."""
    if mine is True:
        return True
    if not isinstance(mine, list):
        return False
    allowed = [h for h in mine if isinstance(h, str)]
    return all(isinstance(h, str) and _domain_within(h, allowed) for h in hosts)


def _domain_within(entry: str, allowed: list[str]) -> bool:
    """Whether every host `entry` (`x.com`, `*.x.com`, `*`) allows is allowed by `allowed`."""
    entry = entry.strip().lower().rstrip(".")
    for mine in (a.strip().lower().rstrip(".") for a in allowed):
        if mine in ("*", entry):
            return True
        if mine.startswith("*.") and entry.removeprefix("*.").endswith("." + mine[2:]):
            return True
    return False


def _nulls(data: Mapping[str, Any], where: tuple[str, ...]) -> list[str]:
    found = []
    for key, value in data.items():
        here = (*where, str(key))
        if here in NULL_KEEPING:
            continue
        if value is None:
            found.append(f"{'.'.join(here)}: null")
        elif isinstance(value, Mapping):
            found.extend(_nulls(value, here))
    return found


def _drop_nulls(data: Mapping[str, Any], where: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        here = (*where, str(key))
        if here in NULL_KEEPING:
            out[key] = value
        elif isinstance(value, Mapping):
            out[key] = _drop_nulls(value, here)
        elif value is not None:
            out[key] = value
    return out


def verdict(config: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """(trusted, what the project config or skills had ignored) from a merged config."""
    state = config.get(TRUST_KEY) or {}
    return bool(state.get("trusted")), list(state.get("ignored") or [])


def is_trusted(config: Mapping[str, Any]) -> bool:
    return verdict(config)[0]

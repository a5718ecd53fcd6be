"""Layered configuration: defaults < user file < project file < environment < CLI flags."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.logs import warn_once
from server.trust import TRUST_KEY, Narrowed, narrow, stricter, trusted_by_user

DEFAULTS: dict[str, Any] = {
    "engine": "native",
    "llm": {"provider": None, "model": None, "baseUrl": None, "maxRetries": 2, "timeout": 600},
    "permissions": {"mode": "default", "approvalTimeout": 120},
    "questions": {"timeout": 60},
    "turnTimeout": 1800,
    "maxSteps": 100,
    "webFetch": {
        "enabled": True,
        "allowedDomains": ["*"],
        "maxBytes": 2_000_000,
        "timeout": 15,
        "allowPrivateHosts": False,
    },
    "webSearch": {"enabled": True, "provider": "auto", "maxResults": 8, "timeout": 15},
    "sandbox": {"mode": "workspace-write", "network": False, "autoAllow": True},
}

WEB_FETCH_MAX_TIMEOUT = 120.0
"""The longest `webFetch.timeout`, and the longest a single fetch may ask for."""

# Keys a cloned repository must not set: they could send the user's keys to another server or
# open the network guard. They are honoured from the user config, the environment and flags.
# (`webFetch.allowedDomains` a project may only narrow: `server.trust.narrow`.)
USER_ONLY_KEYS = ("llm.baseUrl", "webFetch.allowPrivateHosts")
# `mcp` holds `trustedProjects`, which decides whether a project's MCP servers may start.
USER_ONLY_SECTIONS = ("webSearch", "mcp")
# A project's MCP servers (its `.mcp.json` and the `mcpServers` of its config) are kept apart
# under this key, so `server.mcp` starts them only for projects the user trusts.
PROJECT_MCP_KEY = "projectMcpServers"

# environment variable -> dotted config key
log = logging.getLogger(__name__)

ENV_KEYS = {
    "AGENTLS_ENGINE": "engine",
    "AGENTLS_PROVIDER": "llm.provider",
    "AGENTLS_MODEL": "llm.model",
    "AGENTLS_VISION_MODEL": "llm.visionModel",
    "AGENTLS_BASE_URL": "llm.baseUrl",
    "AGENTLS_MAX_RETRIES": "llm.maxRetries",
    "AGENTLS_TURN_TIMEOUT": "turnTimeout",
    "AGENTLS_PERMISSION_MODE": "permissions.mode",
    "AGENTLS_SANDBOX": "sandbox.mode",
}


class ConfigError(Exception):
    """A config file exists but cannot be used."""


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Dicts merge recursively, other values replace, an explicit None deletes the key."""
    out = dict(base)
    for key, value in override.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """`environ`: a listening server's connection's environment, whose XDG_CONFIG_HOME / HOME
    name the user config on Linux (elsewhere the user's config dir does not depend on it)."""
    if environ is not None and sys.platform.startswith("linux"):
        home = environ.get("HOME")
        base = environ.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else None)
        if base:
            return Path(base) / "agentls" / "config.json"
    from platformdirs import user_config_dir

    return Path(user_config_dir("agentls", appauthor=False)) / "config.json"


def read_json_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def project_layer(
    data: dict[str, Any], base: dict[str, Any] | None = None, *, trusted: bool = False
) -> Narrowed:
    """The project file without the keys only the user may set, narrowed as its trust state
    requires (`server.trust`); `ignored` names what was dropped."""
    out = narrow(base or {}, data, trusted=trusted)
    layer = out.layer
    for dotted in USER_ONLY_KEYS:
        section, key = dotted.split(".")
        if isinstance(layer.get(section), dict) and key in layer[section]:
            del layer[section][key]
            out.ignored.append(dotted)
    for section in USER_ONLY_SECTIONS:
        if section in layer:
            del layer[section]
            out.ignored.append(section)
    llm = layer.get("llm")
    if isinstance(llm, dict) and local_model_file(llm.get("model")):
        # The local provider would load that file into this process.
        del llm["model"]
        out.ignored.append("llm.model (a GGUF file)")
    layer.pop("mcpServers", None)
    layer.pop(PROJECT_MCP_KEY, None)
    for name in out.ignored:
        log.warning("ignoring %s from the project config; set it in the user config", name)
    return out


def local_model_file(model: Any) -> bool:
    """A model named by a GGUF path, which the local provider would load into this process:
    only the user may name one (their config, the environment, flags)."""
    return str(model or "").strip().lower().endswith(".gguf")


def project_mcp_servers(cwd: Path, project: dict[str, Any]) -> dict[str, Any]:
    """MCP servers the project declares: `.mcp.json` (Claude Code's file), then the project
    config's `mcpServers`. An unreadable `.mcp.json` is skipped with a warning: it belongs to
    other tools too."""
    try:
        shared = read_json_file(cwd / ".mcp.json").get("mcpServers")
    except ConfigError as exc:
        log.warning("ignoring .mcp.json: %s", exc)
        shared = None
    own = project.get("mcpServers")
    servers = {**(shared if isinstance(shared, dict) else {})}
    servers.update(own if isinstance(own, dict) else {})
    return servers


def _coerce(value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def env_layer(environ: dict[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for var, dotted in ENV_KEYS.items():
        if environ.get(var):
            *parents, leaf = dotted.split(".")
            node = layer
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = _coerce(environ[var])
    return layer


def load_config(
    cwd: Path | None = None,
    *,
    flags: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
    trusted: bool = False,
) -> dict[str, Any]:
    """`trusted`: the client vouches for `cwd` (the editor's workspace trust); the user config's
    `trustedProjects` and the `trust` flag (`--trust`) vouch too."""
    flags = sandbox_object(dict(flags or {}))
    user = sandbox_object(read_json_file(user_config_path(environ)))
    config = deep_merge(DEFAULTS, user)
    verdict: dict[str, Any] = {"trusted": True, "ignored": []}
    floor: Any = None
    if cwd is not None:
        home = Path(environ["HOME"]) if environ and environ.get("HOME") else None
        trusted = bool(trusted or flags.get("trust") or trusted_by_user(cwd, user, home))
        project = sandbox_object(read_json_file(cwd / ".agentls" / "config.json"))
        narrowed = project_layer(project, config, trusted=trusted)
        config = deep_merge(config, narrowed.layer)
        floor = (narrowed.layer.get("sandbox") or {}).get("mode")
        verdict = {"trusted": trusted, "ignored": narrowed.ignored}
        servers = project_mcp_servers(cwd, project)
        if servers:
            config[PROJECT_MCP_KEY] = servers
    flags.pop("trust", None)
    config = deep_merge(config, env_layer(dict(os.environ) if environ is None else environ))
    config = deep_merge(config, flags)
    if floor is not None:
        # What the project made stricter stays so whatever the later layers say.
        config["sandbox"]["mode"] = stricter(config["sandbox"].get("mode"), floor)
    config[TRUST_KEY] = verdict
    fetch = config.get("webFetch")
    if isinstance(fetch, dict):
        fetch["timeout"] = duration(
            fetch.get("timeout"), key="webFetch.timeout", default=15, ceiling=120
        )
    return config


def sandbox_object(layer: dict[str, Any]) -> dict[str, Any]:
    """`sandbox: "read-only"` as `sandbox: {mode: "read-only"}`, so layers merge key by key."""
    if isinstance(layer.get("sandbox"), str):
        layer = {**layer, "sandbox": {"mode": layer["sandbox"]}}
    return layer


def positive(value: Any, default: Any) -> Any:
    """A setting that must be a number above 0 (not a bool); `default` otherwise."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return value if ok else default


def duration(value: Any, *, key: str, default: float, ceiling: float) -> float:
    """A setting in seconds: a number, or a string with a unit (`"20s"`, `"1500ms"`, `"1m"`),
    above 0 and at most `ceiling`. Anything else is refused with a warning naming `key`, and
    `default` used."""
    if value is None:
        return default
    seconds = _seconds(value)
    if seconds is not None and 0 < seconds <= ceiling:
        return seconds
    warn_once(  # the config is loaded at initialize and again for every session
        log,
        (key, repr(value)),
        '%s %r is not a duration of at most %g s (a number of seconds, or e.g. "20s", '
        '"1500ms"); using %g s',
        key,
        value,
        ceiling,
        default,
    )
    return default


def _seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = (
        re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m)\s*", value) if isinstance(value, str) else None
    )
    if not match:
        return None
    return float(match.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[match.group(2)]

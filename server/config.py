"""Layered configuration: defaults < user file < project file < environment < CLI flags."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, Any] = {
    "engine": "native",
    "llm": {"provider": None, "model": None, "baseUrl": None, "maxRetries": 2, "timeout": 600},
    "permissions": {"mode": "default", "approvalTimeout": 120},
    "questions": {"timeout": 60},
    "turnTimeout": 1800,
    "maxSteps": 100,
}

# environment variable -> dotted config key
ENV_KEYS = {
    "AGENTLS_ENGINE": "engine",
    "AGENTLS_PROVIDER": "llm.provider",
    "AGENTLS_MODEL": "llm.model",
    "AGENTLS_BASE_URL": "llm.baseUrl",
    "AGENTLS_MAX_RETRIES": "llm.maxRetries",
    "AGENTLS_TURN_TIMEOUT": "turnTimeout",
    "AGENTLS_PERMISSION_MODE": "permissions.mode",
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


def user_config_path() -> Path:
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
) -> dict[str, Any]:
    config = deep_merge(DEFAULTS, read_json_file(user_config_path()))
    if cwd is not None:
        config = deep_merge(config, read_json_file(cwd / ".agentls" / "config.json"))
    config = deep_merge(config, env_layer(dict(os.environ) if environ is None else environ))
    return deep_merge(config, flags or {})

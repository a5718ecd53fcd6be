"""The environment of commands agentls starts for the model (bash, background jobs): the
server's own, without the provider keys and tokens it holds (`server.redact.secret_names`),
except those the *user* config passes with `shell.passEnv` (a project config cannot)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from server.config import read_json_file, user_config_path
from server.redact import secret_names


def passed_names(environ: Mapping[str, str] | None = None) -> set[str]:
    shell = read_json_file(user_config_path(environ)).get("shell")
    names = shell.get("passEnv") if isinstance(shell, dict) else None
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def child_env(
    extra: dict[str, str] | None = None, *, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` (default: this process's environment) without its held secrets, then `extra`."""
    held = set(secret_names(os.environ if base is None else base)) - passed_names(base)
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if k not in held}
    return {**env, **(extra or {})}

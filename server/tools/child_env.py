"""The environment of commands agentls starts for the model (bash, background jobs): the
server's own, without the provider keys and tokens it holds (`server.redact.secret_names`),
except those the *user* config passes with `shell.passEnv` (a project config cannot)."""

from __future__ import annotations

import os

from server.config import read_json_file, user_config_path
from server.redact import secret_names


def passed_names() -> set[str]:
    shell = read_json_file(user_config_path()).get("shell")
    names = shell.get("passEnv") if isinstance(shell, dict) else None
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    held = set(secret_names()) - passed_names()
    env = {k: v for k, v in os.environ.items() if k not in held}
    return {**env, **(extra or {})}

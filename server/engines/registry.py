"""Which engines a server offers, how each is configured, and what each can do.

Selection of a session's engine: `session/new {engine}` > `--engine` > `AGENTLS_ENGINE` > config
`engine` > `native` (the session service reads it from the merged config).

The command of an external engine: `--engine-command` > `AGENTLS_ENGINE_COMMAND` > the user
config's `engines.<id>.command` > the engine's default (`claude` for claude-code; acp has none).
A flag or variable command belongs to the engine chosen by `--engine` / `AGENTLS_ENGINE` / the user
config's `engine`, or to `acp` when none is. Commands and their `env` are read only from the
user's own settings, never from a project's `.agentls/config.json`: a cloned repository must not
choose what agentls executes.

Skills reach each engine in its own form: native gets the `skill` tool and the catalogue in its
system prompt; claude-code discovers `.claude/skills` itself and gets agentls's other skill
folders as a plugin (`--plugin-dir`, `server.engines.skill_plugin`); an ACP agent has no skill
channel (`engines/list` says `skills: false`). A prompt starting with `/name` runs the skill in
every engine: the session service expands it before the turn reaches the engine.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from typing import Any

from protocol.methods import EngineInfo
from server.engines.base import EngineDriver

ENGINE_IDS = ("native", "acp", "claude-code")
EXTERNAL = ("acp", "claude-code")
DEFAULT_COMMANDS: dict[str, list[str]] = {"claude-code": ["claude"]}
DESCRIPTIONS = {
    "native": "agentls's own agent loop",
    "acp": "an external Agent Client Protocol agent",
    "claude-code": "the Claude Code CLI over stream-json",
}


@dataclass(frozen=True)
class ExternalSettings:
    """How to start an external engine's process."""

    command: list[str] | None
    env: dict[str, str] = field(default_factory=dict)
    """Added to agentls's own environment, which the process receives explicitly."""
    model: str | None = None

    @property
    def available(self) -> bool:
        return bool(self.command and resolve_program(self.command[0]) is not None)


def resolve_program(program: str) -> str | None:
    return shutil.which(program)


def split_command(command: str | list[str] | None) -> list[str] | None:
    if not command:
        return None
    if isinstance(command, list):
        return [str(part) for part in command]
    return shlex.split(command, posix=os.name != "nt")


def user_engines_config(environ: dict[str, str] | None = None) -> dict[str, Any]:
    from server.config import ConfigError, read_json_file, user_config_path

    try:
        return read_json_file(user_config_path(environ))
    except ConfigError:
        return {}


def external_settings(
    engine_id: str,
    flags: dict[str, Any],
    environ: dict[str, str],
    user: dict[str, Any],
) -> ExternalSettings:
    own = (user.get("engines") or {}).get(engine_id) or {}
    chosen = flags.get("engine") or environ.get("AGENTLS_ENGINE") or user.get("engine")
    override = flags.get("engineCommand") or environ.get("AGENTLS_ENGINE_COMMAND")
    applies = chosen == engine_id or (chosen not in EXTERNAL and engine_id == "acp")
    command = split_command(override) if override and applies else None
    command = command or split_command(own.get("command")) or DEFAULT_COMMANDS.get(engine_id)
    env = {str(k): str(v) for k, v in (own.get("env") or {}).items()}
    return ExternalSettings(command=command, env=env, model=own.get("model"))


def build_engines(
    flags: dict[str, Any], *, environ: dict[str, str] | None = None
) -> dict[str, EngineDriver]:
    """Every engine, configured; an external one without a usable command still appears (its
    sessions fail to start with the reason)."""
    from server.engines.acp import AcpEngine
    from server.engines.claude_code import ClaudeCodeEngine
    from server.engines.native import NativeEngine

    given = environ
    environ = dict(os.environ if environ is None else environ)
    user = user_engines_config(given)
    return {
        "native": NativeEngine(environ=given),
        "acp": AcpEngine(external_settings("acp", flags, environ, user), environ=environ),
        "claude-code": ClaudeCodeEngine(
            external_settings("claude-code", flags, environ, user), environ=environ
        ),
    }


def engine_info(engine: Any) -> EngineInfo:
    settings: ExternalSettings | None = getattr(engine, "settings", None)
    description = DESCRIPTIONS.get(engine.id, engine.id)
    available = True
    if settings is not None:
        available = settings.available
        shown = " ".join(settings.command) if settings.command else "no command configured"
        description = f"{description} ({shown})"
    caps = engine.capabilities
    return EngineInfo.model_validate(
        {
            "id": engine.id,
            "name": engine.id,
            "available": available,
            "description": description,
            "capabilities": {
                "images": caps.images,
                "thinking": caps.thinking,
                "steer": caps.steer,
                "skills": caps.skills,
                "permissions": True,
                "questions": True,
            },
        }
    )


def engine_infos(engines: dict[str, Any]) -> list[EngineInfo]:
    return [engine_info(engines[e]) for e in engines]

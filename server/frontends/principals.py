"""Who a resident server's connection acts for, and what it may never change.

A principal is a token (or, on the Unix socket, the server's owner) that the owner maps to one
data dir. The owner's floor is the sandbox and permission mode the server's own configuration
gives its sessions: a connection's flags, environment and session requests may make them
stricter, never looser, and may name a command to run (an engine command, a stdio MCP server)
only where the owner's user config says `"server": {"allowEngineCommand": true}`.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from protocol.methods import AttachParams
from server.frontends.address import AddressError, read_token
from server.redact import SECRET_NAME
from server.sessions.ceiling import MODE_CEILING

MIN_TOKEN_CHARS = 43
"""32 random bytes in base64url."""
PRE_AUTH_BYTES = 64 * 1024
PRE_AUTH_S = 10.0
SANDBOX_RANK = {"off": 0, "workspace-write": 1, "read-only": 2}
MODE_RANK = {"plan": 0, "default": 1, "acceptEdits": 2, "bypassPermissions": 3}
OWNER = "owner"


class Refused(Exception):
    """What a connection asked for that its principal may not have, said in words."""


class _Entry(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
    token_file: str
    home: str


class ServerSection(BaseModel):
    """The `server` section of the owner's user config, as a resident server reads it."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")
    principals: dict[str, _Entry] = {}
    allow_engine_command: bool = False


@dataclass(frozen=True)
class Principal:
    name: str
    home: Path
    """Its data dir (`AGENTLS_HOME` of its sessions)."""
    token: str | None
    """None: the owner on the Unix socket, vouched for by the peer's credentials."""

    @property
    def owner(self) -> bool:
        return self.name == OWNER


@dataclass(frozen=True)
class Floor:
    sandbox: str
    network: Any
    permission_mode: str
    commands: bool
    """Connections may name a command to run (an engine command, a stdio MCP server)."""
    engine_command: str | None
    """The owner's own engine command (flags or environment): never refused."""
    config_home: Path
    """The directory holding the owner's `agentls/config.json`."""


def new_token(path: Path) -> str:
    """Write a fresh token to `path` (mode 600, replacing what was there)."""
    token = secrets.token_urlsafe(32)
    path = path.expanduser()
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    os.replace(temp, path)
    return token


def read_long_token(path: str | Path) -> str:
    token = read_token(path)
    if len(token) < MIN_TOKEN_CHARS:
        raise AddressError(
            f"the token in {path} is too short ({len(token)} characters; at least "
            f"{MIN_TOKEN_CHARS}, 32 random bytes): make one with `agentls serve --new-token FILE`"
        )
    return token


class Principals:
    """Tokens to principals, as the owner set them: `--token-file` is the owner's own, the user
    config's `server.principals` adds `{name: {tokenFile, home}}`."""

    def __init__(self, owner_home: Path, owner_token: str | None, section: ServerSection):
        self.owner = Principal(OWNER, owner_home, None)
        self._by_token: list[Principal] = []
        if owner_token is not None:
            self._by_token.append(Principal(OWNER, owner_home, owner_token))
        for name, entry in section.principals.items():
            if name == OWNER:
                raise AddressError(f"server.principals: {OWNER!r} is the server's own name")
            home = Path(entry.home).expanduser()
            if not home.is_absolute():
                raise AddressError(f"server.principals.{name}.home must be an absolute path")
            token = read_long_token(entry.token_file)
            self._by_token.append(Principal(name, home, token))
        tokens = [p.token for p in self._by_token]
        if len(set(tokens)) != len(tokens):
            raise AddressError("two principals share one token")

    @property
    def any_token(self) -> bool:
        return bool(self._by_token)

    def for_token(self, given: str | None) -> Principal | None:
        found = None
        for principal in self._by_token:
            assert principal.token is not None
            if given is not None and hmac.compare_digest(given.encode(), principal.token.encode()):
                found = principal
        return found


def server_section(config: Mapping[str, Any]) -> ServerSection:
    try:
        return ServerSection.model_validate(config.get("server") or {})
    except ValidationError as exc:
        raise AddressError(f"the user config's `server` section: {exc}") from None


def connection_env(principal: Principal, given: dict[str, str] | None, floor: Floor) -> dict:
    """The environment a connection's sessions get: its own (or, for another principal, the
    server's without its secrets), with the principal's data dir and the owner's user config."""
    if given is None:
        env = dict(os.environ)
        if not principal.owner:
            env = {k: v for k, v in env.items() if not SECRET_NAME.search(k)}
        env.pop("AGENTLS_HOME", None)  # the server's own: the principal's is set below
    else:
        env = dict(given)
    named = env.get("AGENTLS_HOME")
    if named and _real(Path(named)) != _real(principal.home):
        raise Refused(
            "this connection's data dir is fixed by the server's owner; AGENTLS_HOME names "
            "another: start a server of your own for that data dir"
        )
    env["AGENTLS_HOME"] = str(principal.home)
    env["XDG_CONFIG_HOME"] = str(floor.config_home)
    env[MODE_CEILING] = floor.permission_mode
    return env


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path.expanduser()))


def check_config(config: Mapping[str, Any], floor: Floor) -> None:
    """Refuse a connection whose sessions would run below the owner's floor."""
    sandbox = config.get("sandbox") or {}
    mode = str(sandbox.get("mode") or "workspace-write")
    if SANDBOX_RANK.get(mode, 0) < SANDBOX_RANK.get(floor.sandbox, 0):
        raise Refused(
            f"the server's owner runs sessions with sandbox {floor.sandbox}; a connection "
            f"cannot lower it to {mode}"
        )
    if not network_within(sandbox.get("network", False), floor.network):
        raise Refused(
            "the server's owner runs sessions with a sandbox network of "
            f"{floor.network!r}; a connection cannot widen it"
        )
    permission = str((config.get("permissions") or {}).get("mode") or "default")
    if MODE_RANK.get(permission, 3) > MODE_RANK.get(floor.permission_mode, 1):
        raise Refused(
            f"the server's owner runs sessions in permission mode {floor.permission_mode}; a "
            f"connection cannot raise it to {permission}"
        )


def check_commands(flags: Mapping[str, Any], env: Mapping[str, str], floor: Floor) -> None:
    if floor.commands:
        return
    named = flags.get("engineCommand") or env.get("AGENTLS_ENGINE_COMMAND")
    if named and named != floor.engine_command:
        raise Refused(
            "an engine command runs a program on the server's machine: only the server's owner "
            'can allow a connection to pass one ("server": {"allowEngineCommand": true} in '
            "the owner's user config)"
        )
    servers = flags.get("mcpServers") or {}
    if any(isinstance(s, dict) and s.get("command") for s in servers.values()):
        raise Refused(
            "stdio MCP servers from a connection's flags run programs on the server's machine: "
            'only the server\'s owner can allow that ("server": {"allowEngineCommand": true})'
        )


def check_grants(flags: Mapping[str, Any]) -> None:
    """Another principal's connection cannot widen what its sessions may do unasked."""
    if (flags.get("permissions") or {}).get("allow"):
        raise Refused(
            "allow rules (--allowedTools) from a connection of another principal widen what "
            "runs unasked: only the server's owner sets them, in the owner's user config"
        )
    if flags.get("trust"):
        raise Refused(
            "trust (--trust) from a connection of another principal: only the server's owner "
            "trusts folders (trustedProjects in the owner's user config)"
        )


def network_within(network: Any, floor: Any) -> bool:
    if floor is True:
        return True
    if network is False or network is None:
        return True
    if network is True or floor is False or floor is None:
        return False
    return isinstance(network, list) and isinstance(floor, list) and set(network) <= set(floor)


def gate(frame: Any, floor: Floor, *, owner: bool) -> str | None:
    """Why a session request may not run on this connection (it would go below the owner's
    floor, or trust a folder for another principal), or None."""
    if not isinstance(frame, dict) or not isinstance(frame.get("params"), dict):
        return None
    method, params = frame.get("method"), frame["params"]
    if method == "session/new" and params.get("workspaceTrusted") and not owner:
        return (
            "workspaceTrusted from a connection of another principal: only the server's owner "
            "trusts folders (trustedProjects in the owner's user config)"
        )
    if method == "session/new":
        sandbox = params.get("sandbox")
        if isinstance(sandbox, str) and SANDBOX_RANK.get(sandbox, 0) < SANDBOX_RANK.get(
            floor.sandbox, 0
        ):
            return f"the server's owner runs sessions with sandbox {floor.sandbox}: not {sandbox}"
        if reason := _mode_above(params.get("mode"), floor):
            return reason
    if method == "session/set_mode":
        if reason := _mode_above(params.get("modeId"), floor):
            return reason
    if method in ("session/new", "session/load") and not floor.commands:
        servers = params.get("mcpServers")
        if isinstance(servers, dict) and any(
            isinstance(s, dict) and s.get("command") for s in servers.values()
        ):
            return (
                "a stdio MCP server runs a program on the server's machine: only the server's "
                'owner can allow that ("server": {"allowEngineCommand": true})'
            )
    return None


def _mode_above(mode: Any, floor: Floor) -> str | None:
    if not isinstance(mode, str) or MODE_RANK.get(mode, 3) <= MODE_RANK.get(
        floor.permission_mode, 3
    ):
        return None
    return (
        f"the server's owner runs sessions in permission mode {floor.permission_mode}: not {mode}"
    )


def owner_floor(base: dict[str, Any], section: ServerSection) -> Floor:
    """The floor the server's own configuration (its environment, user config and flags)
    gives its sessions."""
    from server.config import ConfigError, load_config, user_config_path

    try:
        config = load_config(None, flags=base, environ=dict(os.environ))
    except ConfigError as exc:
        raise AddressError(str(exc)) from None
    sandbox = config.get("sandbox") or {}
    return Floor(
        sandbox=str(sandbox.get("mode") or "workspace-write"),
        network=sandbox.get("network", False),
        permission_mode=str((config.get("permissions") or {}).get("mode") or "default"),
        commands=section.allow_engine_command,
        engine_command=base.get("engineCommand") or os.environ.get("AGENTLS_ENGINE_COMMAND"),
        config_home=user_config_path(os.environ).parent.parent,
    )


@dataclass(frozen=True)
class AttachPolicy:
    """What a resident server checks at `connection/attach`: who the peer is (`principals`),
    and that what it attaches with keeps its sessions at or above the owner's `floor`."""

    principals: Principals
    floor: Floor
    base: dict[str, Any]
    """The server's own serve flags."""
    flags_of: Callable[[AttachParams], dict[str, Any] | None]
    """A connection's flags as config (None: its argv does not parse; nothing will run)."""

    def settle(self, principal: Principal, params: AttachParams) -> AttachParams:
        """`params` with the environment its sessions get; Refused when it asks for more."""
        from server.config import ConfigError, deep_merge, load_config

        env = connection_env(principal, params.env, self.floor)
        flags = self.flags_of(params) or {}
        check_commands(flags, env, self.floor)
        if not principal.owner:
            check_grants(flags)
        try:
            config = load_config(None, flags=deep_merge(self.base, flags), environ=env)
        except ConfigError as exc:
            raise Refused(str(exc)) from None
        check_config(config, self.floor)
        return params.model_copy(update={"env": env})


def attach_policy(
    owner_token: str | None,
    base: dict[str, Any],
    flags_of: Callable[[AttachParams], dict[str, Any] | None],
) -> AttachPolicy:
    """The policy of a server started with `owner_token` (`--token-file`) and `base` flags;
    AddressError when the owner's settings cannot be used."""
    from server.config import ConfigError, read_json_file, user_config_path
    from server.logs import data_dir

    try:
        section = server_section(read_json_file(user_config_path(os.environ)))
    except ConfigError as exc:
        raise AddressError(str(exc)) from None
    principals = Principals(data_dir(os.environ), owner_token, section)
    return AttachPolicy(principals, owner_floor(base, section), base, flags_of)

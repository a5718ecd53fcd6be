"""Which MCP servers a session gets, read from configuration (no SDK import here).

Entries have the shape of Claude Code's `.mcp.json`: `{"<name>": {"command", "args", "env"}}`
for stdio servers, `{"<name>": {"type": "http", "url", "headers"}}` for streamable HTTP ones;
agentls adds `cwd`, `disabled`, `startupTimeout` and `toolTimeout` (seconds). Strings may use
`${VAR}` and `${VAR:-default}` from agentls's environment.

Sources, later winning on a name clash: the project (`projectMcpServers`, collected by
`server.config` from `.mcp.json` and `.agentls/config.json`), the user's own configuration
(`mcpServers` from the user config, `--mcp-config`), the client (`session/new`). A project's
servers start only when the user config trusts the project (`mcp.trustedProjects`): a cloned
repository must not run commands of its choosing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

Transport = Literal["stdio", "http"]
Source = Literal["user", "project", "client"]
State = Literal["enabled", "disabled", "untrusted", "invalid"]

STARTUP_TIMEOUT = 30.0
TOOL_TIMEOUT = 600.0
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
UNTRUSTED = (
    "declared by the project, which the user config does not trust; add the project directory "
    'to "mcp": {"trustedProjects": [...]} in the user config to start it'
)


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server as configured, ready to start (or why it will not be)."""

    name: str
    source: Source
    transport: Transport = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    startup_timeout: float = STARTUP_TIMEOUT
    tool_timeout: float = TOOL_TIMEOUT
    sandbox: tuple[str, bool] | None = None
    """(mode, network) of the command sandbox a stdio server opted into; None: none."""
    state: State = "enabled"
    problem: str | None = None
    """Why the server does not start (a bad entry, not trusted, disabled)."""
    bridge: Any = None
    """An SDK host's server (`type: sdk`): how its messages reach it (`server.mcp.sdk`)."""

    def key(self) -> str:
        """Equal for two sessions that may share one running server."""
        data = asdict(self)
        for volatile in ("source", "state", "problem"):
            data.pop(volatile)
        data["bridge"] = id(self.bridge) if self.bridge is not None else None
        return json.dumps(data, sort_keys=True)

    def public(self) -> dict[str, Any]:
        """The entry as clients may see it: header and environment values are left out."""
        if self.bridge is not None:
            return {"type": "sdk", "name": self.name}
        if self.transport == "http":
            return {"type": "http", "url": self.url, "headers": sorted(self.headers)}
        return {"type": "stdio", "command": self.command, "args": list(self.args)}


def session_servers(
    config: Mapping[str, Any],
    cwd: Path,
    *,
    client: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[ServerConfig]:
    """Every MCP server the session's configuration names, in name order."""
    environ = os.environ if environ is None else environ
    defaults = config.get("mcp") or {}
    trusted = project_trusted(defaults, cwd)
    layers: list[tuple[Source, Any]] = [
        ("project", config.get("projectMcpServers")),
        ("user", config.get("mcpServers")),
        ("client", client),
    ]
    only = defaults.get("only")  # --strict-mcp-config: the --mcp-config servers alone
    if isinstance(only, list):
        layers = [
            ("user", {n: e for n, e in (config.get("mcpServers") or {}).items() if n in only})
        ]
        layers.append(("client", client))
    chosen: dict[str, ServerConfig] = {}
    for source, entries in layers:
        for name, entry in (entries or {}).items():
            server = parse(name, entry, source, cwd=cwd, defaults=defaults, environ=environ)
            if source == "project" and not trusted and server.state == "enabled":
                server = replace(server, state="untrusted", problem=UNTRUSTED)
            chosen[name] = server
    return [chosen[name] for name in sorted(chosen)]


def project_trusted(defaults: Mapping[str, Any], cwd: Path) -> bool:
    """Whether `mcp.trustedProjects` (user config only) names `cwd` or a parent of it."""
    listed = defaults.get("trustedProjects") or []
    if isinstance(listed, str):
        listed = [listed]
    here = cwd.resolve()
    for entry in listed:
        if entry == "*":
            return True
        root = Path(str(entry)).expanduser().resolve()
        if here == root or root in here.parents:
            return True
    return False


def parse(
    name: str,
    entry: Any,
    source: Source,
    *,
    cwd: Path,
    defaults: Mapping[str, Any],
    environ: Mapping[str, str],
) -> ServerConfig:
    """One entry; a malformed one becomes an `invalid` server that says what is wrong."""
    base = ServerConfig(name=name, source=source, cwd=str(cwd))
    try:
        base = replace(
            base,
            startup_timeout=_seconds(defaults.get("startupTimeout"), STARTUP_TIMEOUT),
            tool_timeout=_seconds(defaults.get("toolTimeout"), TOOL_TIMEOUT),
        )
        server = _parse_entry(base, entry, cwd)
        return _expand(server, environ)
    except ValueError as exc:
        return replace(base, state="invalid", problem=str(exc))


def _parse_entry(base: ServerConfig, entry: Any, cwd: Path) -> ServerConfig:
    if not isinstance(entry, Mapping):
        raise ValueError("an MCP server entry must be an object")
    kind = entry.get("type") or ("http" if entry.get("url") else "stdio")
    base = replace(
        base,
        startup_timeout=_seconds(entry.get("startupTimeout"), base.startup_timeout),
        tool_timeout=_seconds(entry.get("toolTimeout"), base.tool_timeout),
        state="disabled" if entry.get("disabled") else "enabled",
        problem="disabled in the configuration" if entry.get("disabled") else None,
    )
    if kind in HTTP_TYPES:
        if entry.get("sandbox") not in (None, False, "off"):
            raise ValueError("sandbox applies to stdio servers (commands), not to http ones")
        url = _text(entry, "url")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) URL, not {url!r}")
        return replace(base, transport="http", url=url, headers=_strings(entry, "headers"))
    if kind == "sdk":
        if not callable(entry.get("bridge")):
            raise ValueError("an sdk server lives in an SDK host, and none serves it here")
        return replace(base, bridge=entry["bridge"])
    if kind != "stdio":
        raise ValueError(f"transport {kind!r} is not supported (use stdio or http)")
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("args must be a list of strings")
    workdir = entry.get("cwd")
    return replace(
        base,
        command=_text(entry, "command"),
        args=tuple(args),
        env=_strings(entry, "env"),
        cwd=str(cwd / Path(workdir).expanduser()) if isinstance(workdir, str) else base.cwd,
        sandbox=_sandbox(entry.get("sandbox")),
    )


def _sandbox(value: Any) -> tuple[str, bool] | None:
    """A stdio server's opt-in: `true` (workspace-write, no network), a mode name, or
    `{mode, network}`; `false` / `"off"` / absent: none."""
    if value in (None, False, "off"):
        return None
    if value is True:
        return ("workspace-write", False)
    raw = {"mode": value} if isinstance(value, str) else value
    if not isinstance(raw, Mapping) or set(raw) - {"mode", "network"}:
        raise ValueError(f"sandbox must be true, a mode or {{mode, network}}, not {value!r}")
    mode, network = raw.get("mode", "workspace-write"), raw.get("network", False)
    if mode not in ("workspace-write", "read-only", "off") or not isinstance(network, bool):
        raise ValueError(f"sandbox must be true, a mode or {{mode, network}}, not {value!r}")
    return None if mode == "off" else (mode, network)


def _text(entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} is required and must be a non-empty string")
    return value


def _strings(entry: Mapping[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{key} must map names to strings")
    return dict(value)


def _seconds(value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"timeouts are positive numbers of seconds, not {value!r}")
    return float(value)


def _expand(server: ServerConfig, environ: Mapping[str, str]) -> ServerConfig:
    def sub(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            value = environ.get(match.group(1))
            if value is None:
                if match.group(2) is None:
                    raise ValueError(f"environment variable {match.group(1)} is not set")
                return match.group(2)
            return value

        return VARIABLE.sub(one, text)

    return replace(
        server,
        command=sub(server.command),
        args=tuple(sub(a) for a in server.args),
        env={k: sub(v) for k, v in server.env.items()},
        url=sub(server.url),
        headers={k: sub(v) for k, v in server.headers.items()},
    )


def from_acp(servers: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """ACP `mcpServers` (stdio: `command, args, env: [{name, value}]`; http/sse: `url,
    headers: [{name, value}]`) in our entry shape, by name."""
    entries: dict[str, dict[str, Any]] = {}
    for server in servers:
        pairs = lambda items: {i.name: i.value for i in items or []}  # noqa: E731
        kind = getattr(server, "type", None)
        if getattr(server, "url", None) is not None:
            entries[server.name] = {
                "type": kind or "http",
                "url": server.url,
                "headers": pairs(getattr(server, "headers", None)),
            }
        elif getattr(server, "command", None) is not None:
            entries[server.name] = {
                "command": server.command,
                "args": list(server.args or []),
                "env": pairs(getattr(server, "env", None)),
            }
        else:
            entries[server.name] = {"type": kind or "unknown"}
    return entries


def from_mcp_config(values: Iterable[str]) -> dict[str, Any]:
    """`--mcp-config` values (JSON text or a file holding it, `{"mcpServers": {...}}`), merged
    in order; raises ValueError naming the value that cannot be used."""
    servers: dict[str, Any] = {}
    for value in values:
        text = value
        if not value.lstrip().startswith("{"):
            try:
                text = Path(value).expanduser().read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"--mcp-config {value}: {exc}") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--mcp-config {value[:60]}: not JSON ({exc})") from exc
        entries = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise ValueError(f'--mcp-config {value[:60]}: expected {{"mcpServers": {{...}}}}')
        servers.update(entries)
    return servers

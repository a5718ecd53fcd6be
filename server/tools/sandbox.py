"""The sandbox commands run in: bubblewrap (`bwrap`) on Linux.

Modes: `workspace-write` (the workspace and a private temp dir, `$TMPDIR`, writable; the rest
of the machine, /tmp included, read-only; no network unless `network`: true, or a list of hosts
reached through a proxy of agentls's, `netproxy`), `read-only` (only the private temp
dir writable), `off`. Inside, the workspace's `.git` and control files and folders stay read-only
(the git tool's own write calls get `.git` writable). Every sandbox has its own PID namespace
(host processes are out of sight, so `/proc/<pid>/root` leads nowhere), drops every capability
(a root user keeps none), and dies with agentls.

`probe()` checks once per process that a sandbox can really be made here (bwrap installed, user
namespaces allowed); where it cannot, a session asking for one runs without it and says so.
macOS gets a `sandbox-exec` profile (`seatbelt_profile`), written to the same rules and not
tested on a Mac.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from protocol.methods import SandboxMode
from server.policy.paths import CONTROL_DIRS, CONTROL_FILES
from server.tools.netproxy import DENIED_MARK, HostProxy

SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)
BWRAP_VARIABLE = "AGENTLS_BWRAP"
"""The bwrap to use instead of the one on PATH (an empty value: none)."""
PROBE_TIMEOUT_S = 20.0
BRIDGE = Path(__file__).with_name("netbridge.py")


@dataclass(frozen=True)
class SandboxSettings:
    mode: SandboxMode = "workspace-write"
    network: bool = False
    allowed_hosts: tuple[str, ...] = ()
    """With the network off, the hosts commands may still reach, through agentls's proxy
    (`example.com`, `*.example.com`)."""
    auto_allow: bool = True
    """In `default` and `acceptEdits`, a command that stays inside the sandbox runs unasked."""
    required: bool = False
    """No command runs at all without a sandbox (replay)."""


def settings_from(config: Mapping[str, Any]) -> SandboxSettings:
    """`sandbox` of a merged config: a mode name or `{mode, network, autoAllow, required}`
    (`network`: true, false or a list of hosts)."""
    raw = config.get("sandbox")
    if raw is None:
        return SandboxSettings()
    if isinstance(raw, str):
        raw = {"mode": raw}
    if not isinstance(raw, Mapping):
        raise ValueError(f"sandbox must be a mode name or an object, not {raw!r}")
    mode = raw.get("mode", "workspace-write")
    if mode not in SANDBOX_MODES:
        raise ValueError(f"sandbox.mode must be one of {', '.join(SANDBOX_MODES)}, not {mode!r}")
    network = raw.get("network")
    hosts: tuple[str, ...] = ()
    if isinstance(network, list):
        hosts, network = host_patterns(network), False
    flags = {}
    for key in ("autoAllow", "required"):
        value = raw.get(key)
        if value is not None and not isinstance(value, bool):
            raise ValueError(f"sandbox.{key} must be true or false, not {value!r}")
        flags[key] = value
    if network is not None and not isinstance(network, bool):
        raise ValueError(f"sandbox.network must be true, false or a list of hosts, not {network!r}")
    return SandboxSettings(
        mode=mode,
        network=bool(network),
        allowed_hosts=hosts,
        auto_allow=flags["autoAllow"] is not False,
        required=bool(flags["required"]),
    )


_HOST = re.compile(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?")


def host_patterns(values: list[Any]) -> tuple[str, ...]:
    """`sandbox.network` as a list: host names or `*.` patterns (no scheme, port or path)."""
    out = []
    for value in values:
        text = value.strip().lower() if isinstance(value, str) else ""
        if not _HOST.fullmatch(text) and not _is_ip(text):
            raise ValueError(
                f"sandbox.network hosts are names like example.com or *.example.com, not {value!r}"
            )
        out.append(text)
    return tuple(out)


def _is_ip(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Probe:
    available: bool
    kind: str | None
    """`bwrap` or `sandbox-exec`; None when no sandbox can be made."""
    reason: str = ""
    """Why there is none."""


def bwrap_path(environ: Mapping[str, str] = os.environ) -> str | None:
    if BWRAP_VARIABLE in environ:
        return environ[BWRAP_VARIABLE] or None
    return shutil.which("bwrap")


@functools.cache
def probe() -> Probe:
    if sys.platform == "darwin":
        if Path("/usr/bin/sandbox-exec").exists():
            return Probe(True, "sandbox-exec")
        return Probe(False, None, "sandbox-exec is not on this Mac")
    if not sys.platform.startswith("linux"):
        return Probe(False, None, f"no sandbox for {sys.platform}")
    bwrap = bwrap_path()
    if bwrap is None:
        return Probe(False, None, "bubblewrap (bwrap) is not installed: apt install bubblewrap")
    argv = [bwrap, *_isolation(network=False), "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(False, None, f"bwrap cannot run: {exc}")
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit code {done.returncode}"
        return Probe(False, None, f"bwrap cannot make a sandbox here ({why}); user namespaces off?")
    return Probe(True, "bwrap")


def _isolation(*, network: bool) -> list[str]:
    """The namespaces, and the whole machine read-only with fresh /dev and /proc over it."""
    flags = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL"]
    if not network:
        flags.append("--unshare-net")
    return [*flags, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]


def protected(workspace: Path) -> list[Path]:
    """The workspace's control files and folders that exist, `.git` among them."""
    names = {*CONTROL_DIRS, *CONTROL_FILES}
    try:
        entries = list(workspace.iterdir())
    except OSError:
        return []
    return sorted(p for p in entries if p.name.casefold() in names)


@dataclass
class Sandbox:
    """One session's sandbox: what it allows, where, and a private temp dir."""

    settings: SandboxSettings
    workspace: Path
    probe: Probe
    _tmp: Path | None = field(default=None, repr=False)
    _proxy: HostProxy | None = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return self.settings.mode != "off" and self.probe.available

    @property
    def missing(self) -> str | None:
        """Why commands run without the sandbox that was asked for; None when they do not."""
        if self.settings.mode == "off" or self.probe.available:
            return None
        return self.probe.reason

    def describe(self) -> str:
        if self.settings.network:
            network = "network on"
        elif self.proxied:
            network = f"network only to {', '.join(self.settings.allowed_hosts)}"
        else:
            network = "network off"
        return f"{self.settings.mode}, {network}"

    @property
    def proxied(self) -> bool:
        """Whether commands reach the allowed hosts through agentls's proxy."""
        return not self.settings.network and bool(self.settings.allowed_hosts)

    def temp_dir(self) -> Path:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="agentls-sandbox-"))
        return self._tmp

    def wrap(self, argv: list[str], *, cwd: Path, git_writable: bool = False) -> list[str]:
        """`argv` to run inside the sandbox, starting in `cwd`."""
        if self.probe.kind == "sandbox-exec":
            profile = seatbelt_profile(self, git_writable=git_writable)
            return ["/usr/bin/sandbox-exec", "-p", profile, *argv]
        bwrap = bwrap_path()
        assert bwrap is not None
        out = [bwrap, *_isolation(network=self.settings.network)]
        out += ["--bind", str(self.temp_dir()), str(self.temp_dir())]
        if self.settings.mode == "workspace-write":
            out += ["--bind", str(self.workspace), str(self.workspace)]
            for path in protected(self.workspace):
                if not (git_writable and path.name == ".git"):
                    out += ["--ro-bind", str(path), str(path)]
        if self.proxied:
            if self._proxy is None:
                self._proxy = HostProxy(self.settings.allowed_hosts)
            argv = [sys.executable, "-I", "-S", str(BRIDGE), self._proxy.socket_path, "--", *argv]
        return [*out, "--chdir", str(cwd), "--", *argv]

    def refusals(self) -> int:
        """How many connections the host allow-list has refused so far."""
        return len(self._proxy.refused) if self._proxy is not None else 0

    def refused_since(self, mark: int) -> list[str]:
        """The hosts refused since `refusals()` returned `mark`, each once."""
        if self._proxy is None:
            return []
        return list(dict.fromkeys(self._proxy.refused[mark:]))

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        return {**env, "TMPDIR": str(self.temp_dir())}

    def close(self) -> None:
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def make_sandbox(config: Mapping[str, Any], workspace: Path) -> Sandbox:
    settings = settings_from(config)
    return Sandbox(settings, workspace, probe() if settings.mode != "off" else Probe(False, None))


def seatbelt_profile(sandbox: Sandbox, *, git_writable: bool = False) -> str:
    """A macOS `sandbox-exec` profile for the same rules (untested: no Mac here)."""
    writable = [sandbox.temp_dir()]
    if sandbox.settings.mode == "workspace-write":
        writable.append(sandbox.workspace)
    rules = ["(version 1)", "(allow default)", "(deny file-write*)"]
    rules += [f'(allow file-write* (subpath "{_quoted(p)}"))' for p in writable]
    rules.append('(allow file-write* (literal "/dev/null"))')
    if sandbox.settings.mode == "workspace-write":
        for path in protected(sandbox.workspace):
            if not (git_writable and path.name == ".git"):
                rules.append(f'(deny file-write* (subpath "{_quoted(path)}"))')
    if not sandbox.settings.network:
        rules.append("(deny network*)")
        rules.append('(allow network* (remote unix-socket (path-literal "/private/var/run/syslog")))')
    return "\n".join(rules)


def _quoted(path: Path) -> str:
    return str(path).replace("\\", "\\\\").replace('"', '\\"')


_READ_ONLY = re.compile(r"read-only file system", re.IGNORECASE)
_NO_NETWORK = re.compile(
    r"could not resolve host|temporary failure in name resolution|name or service not known"
    r"|network is unreachable|getaddrinfo|failed to establish a new connection"
    r"|connection refused|nodename nor servname",
    re.IGNORECASE,
)


_DENIED = re.compile(rf"{re.escape(DENIED_MARK)}|CONNECT tunnel failed, response 403")


def blocked(
    sandbox: Sandbox, exit_code: int | None, output: str, refused: Sequence[str] = ()
) -> str | None:
    """What the sandbox seems to have stopped in a failed command: `write` or `network`.
    `refused`: hosts the allow-list refused while it ran, whatever the command printed."""
    if exit_code == 0:
        return None
    if _READ_ONLY.search(output):
        return "write"
    if not sandbox.settings.network and (
        refused or _NO_NETWORK.search(output) or _DENIED.search(output)
    ):
        return "network"
    return None


def blocked_hint(sandbox: Sandbox, what: str, refused: Sequence[str] = ()) -> str:
    network = "a network connection"
    if sandbox.proxied:
        network = f"a connection to a host other than {', '.join(sandbox.settings.allowed_hosts)}"
        if refused:
            network += f" ({', '.join(refused)})"
    action = {
        "write": "a write outside the workspace (or to .git or a control file)",
        "network": network,
    }[what]
    return (
        f"The command ran in the sandbox ({sandbox.describe()}), which seems to have stopped "
        f"{action}. If it really needs that, run it again with outside_sandbox: true; the user "
        "is asked first."
    )

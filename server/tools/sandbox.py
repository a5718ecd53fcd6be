"""The sandbox commands run in: bubblewrap (`bwrap`) on Linux.

Modes: `workspace-write` (the workspace and a private temp dir, `$TMPDIR`, writable; the rest
of the machine, /tmp included, read-only; no network unless `network`: true, or a list of hosts
reached through a proxy of agentls's, `netproxy`), `read-only` (only the private temp
dir writable), `off`. Inside, the workspace's control files and folders stay read-only whether
or not they exist (`sandbox_mounts`; the git tool's own write calls get `.git` writable),
secrets are hidden (`sandbox.denyRead` adds to them), no Unix socket can be made (`seccomp`)
and the variables that name host sockets are gone. Every sandbox has its own PID namespace
(host processes are out of sight, so `/proc/<pid>/root` leads nowhere), drops every capability
(a root user keeps none), and dies with agentls.

`probe()` checks once per process that a sandbox can really be made here (bwrap installed, user
namespaces allowed, the seccomp filter loads); where it cannot, a session asking for one runs
without it and says so. macOS gets a `sandbox-exec` profile (`seatbelt_profile`), written to
the same rules and not tested on a Mac.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
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
from server.logs import runtime_dir
from server.policy.paths import CONTROL_NAMES
from server.tools import seccomp
from server.tools.netproxy import DENIED_MARK, HostAsker, HostProxy, split_port
from server.tools.sandbox_mounts import (
    Held,
    Placeholders,
    hide,
    home_of,
    nested_git,
    private_dir,
    secret_paths,
)
from server.trust import is_broad

SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)
BWRAP_VARIABLE = "AGENTLS_BWRAP"
"""The bwrap to use instead of the one on PATH (an empty value: none)."""
PROBE_TIMEOUT_S = 20.0
BRIDGE = Path(__file__).with_name("netbridge.py")
HOST_SOCKET_VARIABLES = (
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS", "DOCKER_HOST", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY",
    "XAUTHORITY", "PULSE_SERVER", "KRB5CCNAME", "GNOME_KEYRING_CONTROL", "SWAYSOCK", "I3SOCK",
    "TMUX", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "VSCODE_GIT_ASKPASS_NODE",
    "GIT_ASKPASS", "SSH_ASKPASS", "BROWSER",
)
"""Variables that name a host socket or a program outside: a sandboxed command gets none."""


@dataclass(frozen=True)
class SandboxSettings:
    mode: SandboxMode = "workspace-write"
    network: bool = False
    allowed_hosts: tuple[str, ...] = ()
    """With the network off, the hosts commands may still reach, through agentls's proxy
    (`example.com`, `*.example.com`, `host:port`)."""
    auto_allow: bool = True
    """In `default` and `acceptEdits`, a command that stays inside the sandbox runs unasked."""
    required: bool = False
    """No command runs at all without a sandbox (replay)."""
    deny_read: tuple[str, ...] = ()
    """Paths hidden from commands besides the built-in secrets (`~/` for the home folder)."""
    network_ask: bool = False
    """`sandbox.network: "ask"`: the network stays off inside, and the first connection of a
    command to a host asks the user (through the running turn) before the proxy makes it."""


def settings_from(config: Mapping[str, Any]) -> SandboxSettings:
    """`sandbox` of a merged config: a mode name or `{mode, network, autoAllow, required,
    denyRead}` (`network`: true, false, "ask" or a list of hosts)."""
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
    ask = network == "ask"
    if isinstance(network, list):
        hosts, network = host_patterns(network), False
    elif ask:
        network = False
    flags = {}
    for key in ("autoAllow", "required"):
        value = raw.get(key)
        if value is not None and not isinstance(value, bool):
            raise ValueError(f"sandbox.{key} must be true or false, not {value!r}")
        flags[key] = value
    if network is not None and not isinstance(network, bool):
        raise ValueError(
            f'sandbox.network must be true, false, "ask" or a list of hosts, not {network!r}'
        )
    deny = raw.get("denyRead") or []
    if not isinstance(deny, list) or not all(_absolute_or_home(d) for d in deny):
        raise ValueError(
            f"sandbox.denyRead must be a list of absolute or ~/ paths, not {raw.get('denyRead')!r}"
        )
    return SandboxSettings(
        mode=mode,
        network=bool(network),
        allowed_hosts=hosts,
        auto_allow=flags["autoAllow"] is not False,
        required=bool(flags["required"]),
        deny_read=tuple(deny),
        network_ask=ask,
    )


def _absolute_or_home(entry: Any) -> bool:
    return isinstance(entry, str) and (entry == "~" or entry.startswith(("/", "~/")))


_HOST = re.compile(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?")


def host_patterns(values: list[Any]) -> tuple[str, ...]:
    """`sandbox.network` as a list: host names or `*.` patterns, each with a `:port` when it
    is not 80 or 443 (no scheme or path)."""
    out = []
    for value in values:
        text = value.strip().lower() if isinstance(value, str) else ""
        host, port = split_port(text)
        if (not _HOST.fullmatch(host) and not _is_ip(host)) or port == 0:
            raise ValueError(
                "sandbox.network hosts are names like example.com, *.example.com or "
                f"example.com:8443, not {value!r}"
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
    if seccomp.host_arch() is None:
        return Probe(False, None, "no seccomp filter for this processor: Unix sockets stay open")
    filtered = _filtered([bwrap, *_isolation(network=False), "--seccomp", "3", "--", "true"])
    try:
        done = subprocess.run(filtered, capture_output=True, timeout=PROBE_TIMEOUT_S)
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


def state_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """agentls's own sandbox files (the seccomp filter, placeholder records): in the runtime
    dir, which every sandbox hides."""
    return runtime_dir(environ) / "sandbox"


@functools.cache
def _filter_file(folder: Path) -> Path:
    program = seccomp.host_program() or b""
    path = folder / f"seccomp-{hashlib.sha256(program).hexdigest()[:16]}.bpf"
    if not path.exists():
        private_dir(folder)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as out:
            out.write(program)
        os.replace(out.name, path)
    return path


def _filtered(argv: list[str], folder: Path | None = None) -> list[str]:
    """`argv` (a bwrap command with `--seccomp 3`) started so that fd 3 reads the filter."""
    path = _filter_file(folder or state_dir())
    return ["/bin/sh", "-c", 'exec "$@" 3<"$0"', str(path), *argv]


@dataclass
class Sandbox:
    """One session's sandbox: what it allows, where, and a private temp dir."""

    settings: SandboxSettings
    workspace: Path
    probe: Probe
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    _tmp: Path | None = field(default=None, repr=False)
    _proxy: HostProxy | None = field(default=None, repr=False)
    _holds: int = field(default=0, repr=False)
    _nested: list[Path] | None = field(default=None, repr=False)
    _asker: HostAsker | None = field(default=None, repr=False)
    _hosts: set[str] = field(default_factory=set, repr=False)
    """Hosts (`host:port`) the user allowed for the rest of the session."""

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
        elif self.settings.network_ask:
            network = "network asks for each new host"
        elif self.proxied:
            network = f"network only to {', '.join(self.settings.allowed_hosts)}"
        else:
            network = "network off"
        return f"{self.settings.mode}, {network}"

    @property
    def proxied(self) -> bool:
        """Whether commands reach the allowed hosts through agentls's proxy."""
        settings = self.settings
        return not settings.network and (bool(settings.allowed_hosts) or settings.network_ask)

    def ask_hosts_with(self, asker: HostAsker | None) -> None:
        """Who asks the user about a new host (`sandbox.network: "ask"`): the running turn's;
        None between turns (a host nobody can be asked about is refused)."""
        self._asker = asker

    def _ask(self, host: str, port: int) -> bool:
        key = f"{host}:{port}"
        if key in self._hosts:
            return True
        asker = self._asker
        if asker is None:
            return False
        allowed, always = asker(host, port)
        if allowed and always:
            self._hosts.add(key)
        return allowed

    def unheld(self) -> str | None:
        """Why a command here must ask although it stays inside: what the sandbox cannot
        hold for it. None when it holds everything."""
        if is_broad(self.workspace, home_of(self.environ)):
            return (
                f"the workspace is {self.workspace}, which holds your shell profile, your "
                "agentls config and every project: open a project folder to let commands "
                "run unasked"
            )
        if self.settings.mode != "workspace-write":
            return None
        links = [n for n in CONTROL_NAMES if (self.workspace / n).is_symlink()]
        if links:
            return f"{', '.join(links)} is a symbolic link, which the sandbox cannot keep read-only"
        return None

    def secrets(self) -> list[Path]:
        """The paths commands cannot read, as named."""
        return secret_paths(self.environ, self.settings.deny_read)

    def temp_dir(self) -> Path:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="agentls-sandbox-"))
        return self._tmp

    def open_filter(self) -> int | None:
        """A descriptor of the seccomp filter for one command's `wrap(filter_fd=...)`: the
        caller passes it to the command (`pass_fds`) and closes it once the command started.
        None when the command gets the filter another way."""
        if self.probe.kind != "bwrap" or self.proxied:
            return None
        return os.open(_filter_file(state_dir(self.environ)), os.O_RDONLY | os.O_CLOEXEC)

    def wrap(
        self,
        argv: list[str],
        *,
        cwd: Path,
        git_writable: bool = False,
        filter_fd: int | None = None,
    ) -> list[str]:
        """`argv` to run inside the sandbox, starting in `cwd`. Each call holds the workspace's
        control files until `release()` (once the command has ended) or `close()`.
        `filter_fd` (`open_filter()`): bwrap reads the seccomp filter there; without it, a
        shell in front of bwrap opens the filter file."""
        if self.probe.kind == "sandbox-exec":
            profile = seatbelt_profile(self, git_writable=git_writable)
            return ["/usr/bin/sandbox-exec", "-p", profile, *argv]
        bwrap = bwrap_path()
        assert bwrap is not None
        workspace = Path(os.path.realpath(self.workspace))
        first: list[str] = []
        rest: list[str] = []
        for path, mounts in hide([*self.secrets(), state_dir(self.environ)]).items():
            # A folder that holds the workspace is hidden before the workspace is bound (after,
            # it would hide it); any other after (before, the workspace would show it again).
            holds = path == workspace or path in workspace.parents
            (first if holds else rest).extend(mounts)
        out = [bwrap, *_isolation(network=self.settings.network), *first]
        out += ["--bind", str(self.temp_dir()), str(self.temp_dir())]
        if self.settings.mode == "workspace-write":
            out += ["--bind", str(self.workspace), str(self.workspace)]
            out += self._hold(git_writable).mounts
        out += rest
        if self.proxied:
            if self._proxy is None:
                ask = self._ask if self.settings.network_ask else None
                self._proxy = HostProxy(self.settings.allowed_hosts, ask=ask)
            program = (seccomp.host_program() or b"").hex()
            bridge = [sys.executable, "-I", "-S", str(BRIDGE), self._proxy.socket_path]
            return [*out, "--chdir", str(cwd), "--", *bridge, "--seccomp", program, "--", *argv]
        fd = "3" if filter_fd is None else str(filter_fd)
        out += ["--seccomp", fd, "--chdir", str(cwd), "--", *argv]
        return _filtered(out, state_dir(self.environ)) if filter_fd is None else out

    def _hold(self, git_writable: bool) -> Held:
        if self._nested is None:
            self._nested = nested_git(self.workspace)
        # The git tool's own calls (asked for) get `.git` writable, and no placeholder that a
        # `git add` would pick up.
        skip = frozenset({".git"}) if git_writable else frozenset()
        placeholders = _placeholders(state_dir(self.environ))
        held = placeholders.hold(self.workspace, skip=skip, create=not git_writable)
        self._holds += 1
        if not git_writable:
            for path in self._nested:
                if path.exists() and not path.is_symlink():
                    held.mounts += ["--ro-bind", str(path), str(path)]
        return held

    def release(self) -> None:
        """One wrapped command has ended: its placeholders may go once no command holds them."""
        if self._holds > 0:
            self._holds -= 1
            _placeholders(state_dir(self.environ)).release(self.workspace)

    def refusals(self) -> int:
        """How many connections the host allow-list has refused so far."""
        return len(self._proxy.refused) if self._proxy is not None else 0

    def refused_since(self, mark: int) -> list[str]:
        """The hosts refused since `refusals()` returned `mark`, each once."""
        if self._proxy is None:
            return []
        return list(dict.fromkeys(self._proxy.refused[mark:]))

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        kept = {k: v for k, v in env.items() if k not in HOST_SOCKET_VARIABLES}
        return {**kept, "TMPDIR": str(self.temp_dir())}

    def close(self) -> None:
        held = self._holds > 0 or self._nested is not None
        while self._holds:
            self.release()
        if held:  # the session ends: its placeholders go now if no other command holds them
            _placeholders(state_dir(self.environ)).sweep(self.workspace)
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


@functools.cache
def _placeholders(folder: Path) -> Placeholders:
    placeholders = Placeholders(folder)
    atexit.register(placeholders.sweep_all)
    return placeholders


def commands_running(path: Path, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a sandboxed command (of any agentls process) may be changing the files around
    `path` right now: a folder swapped for a symlink by one could redirect an open that agentls
    does not make itself (an editor's)."""
    real = Path(os.path.realpath(path))
    return _placeholders(state_dir(environ)).running(real)


def make_sandbox(
    config: Mapping[str, Any], workspace: Path, environ: Mapping[str, str] | None = None
) -> Sandbox:
    settings = settings_from(config)
    found = probe() if settings.mode != "off" else Probe(False, None)
    return Sandbox(settings, workspace, found, os.environ if environ is None else environ)


def seatbelt_profile(sandbox: Sandbox, *, git_writable: bool = False) -> str:
    """A macOS `sandbox-exec` profile for the same rules (untested: no Mac here)."""
    writable = [sandbox.temp_dir()]
    if sandbox.settings.mode == "workspace-write":
        writable.append(sandbox.workspace)
    rules = ["(version 1)", "(allow default)", "(deny file-write*)"]
    rules += [f'(allow file-write* (subpath "{_quoted(p)}"))' for p in writable]
    rules.append('(allow file-write* (literal "/dev/null"))')
    if sandbox.settings.mode == "workspace-write":
        for name in CONTROL_NAMES:
            if not (git_writable and name == ".git"):
                rules.append(f'(deny file-write* (subpath "{_quoted(sandbox.workspace / name)}"))')
    rules += [f'(deny file-read* (subpath "{_quoted(p)}"))' for p in sandbox.secrets()]
    rules.append("(deny network-outbound (remote unix-socket))")
    if not sandbox.settings.network:
        rules.append("(deny network*)")
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

"""What a sandbox hides and what it holds read-only.

- Secrets (`secret_paths`): credentials in the home folder, agentls's own data, config and
  runtime folders (sessions, keys, the resident server's sockets and tokens), and what the user
  lists in `sandbox.denyRead`. A folder is covered by an empty read-only tmpfs, a file by an
  empty file.
- Control files and folders of the workspace (`server.policy.paths.CONTROL_NAMES`), at the top
  and, for `.git`, below it (`nested_git`): read-only whether or not they exist. One that does
  not exist yet gets an empty placeholder for the command's lifetime (`Placeholders`), so the
  command cannot create it; the placeholder is removed once no command of any agentls process
  holds it (a removed mountpoint is lazily unmounted in every sandbox that bound it, so it must
  outlive them all).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from server.config import user_config_path
from server.logs import data_dir, runtime_dir
from server.policy.paths import CONTROL_DIRS, CONTROL_NAMES

HOME_SECRETS = (
    ".ssh", ".aws", ".azure", ".gnupg", ".kube", ".docker", ".netrc", ".git-credentials",
    ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".vault-token",
    ".password-store", ".local/share/keyrings", ".terraform.d/credentials.tfrc.json",
    ".mozilla", ".bash_history", ".zsh_history", ".python_history",
)
CONFIG_SECRETS = (
    "gcloud", "gh", "hub", "google-chrome", "chromium", "BraveSoftware", "microsoft-edge",
)
"""Under `$XDG_CONFIG_HOME` (`~/.config`)."""
SWEEP_AFTER_S = 1.0
"""How long placeholders outlive the last command that held them: commands in a row reuse
them (removing a folder costs milliseconds here), and the tree looks unchanged soon after."""
NESTED_SCAN_LIMIT = 20_000
"""Folders looked at for `.git` below the top of the workspace, at most."""


def private_dir(folder: Path) -> None:
    """`folder` and its parent (agentls's runtime dir), each made 0700 where missing: the
    resident server refuses a runtime dir others may enter."""
    for path in (folder.parent, folder):
        if not path.is_dir():
            path.mkdir(mode=0o700, parents=True, exist_ok=True)


def home_of(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or Path.home())


def secret_paths(environ: Mapping[str, str], extra: Iterable[str] = ()) -> list[Path]:
    """Every path a sandboxed command may not read, as named (not resolved)."""
    home = home_of(environ)
    config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    paths = [home / name for name in HOME_SECRETS]
    paths += [config_home / name for name in CONFIG_SECRETS]
    paths += [data_dir(environ), user_config_path(environ).parent, runtime_dir(environ)]
    if environ.get("XDG_RUNTIME_DIR"):
        paths.append(Path(environ["XDG_RUNTIME_DIR"]))
    paths += [expand(entry, home) for entry in extra]
    return list(dict.fromkeys(paths))


def expand(entry: str, home: Path) -> Path:
    if entry == "~" or entry.startswith("~/"):
        return home / entry[2:]
    return Path(entry)


def hide(paths: Iterable[Path]) -> dict[Path, list[str]]:
    """The existing `paths` (symlinks resolved) with the bwrap arguments that hide each."""
    out: dict[Path, list[str]] = {}
    for path in paths:
        real = Path(os.path.realpath(path))
        try:
            mode = os.stat(real).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            out[real] = ["--tmpfs", str(real), "--remount-ro", str(real)]
        else:
            out[real] = ["--ro-bind", "/dev/null", str(real)]
    # Inside a hidden folder there is nothing left to hide (nor a place to mount on).
    return {p: m for p, m in out.items() if not any(a in out for a in p.parents)}


def nested_git(workspace: Path, limit: int = NESTED_SCAN_LIMIT) -> list[Path]:
    """`.git` folders and files below the top of the workspace (submodules, vendored
    repositories), looking at `limit` folders at most; links are not followed."""
    found: list[Path] = []
    pending = [workspace]
    seen = 0
    while pending and seen < limit:
        folder = pending.pop()
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git":
                if folder != workspace:
                    found.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
    return found


@dataclass
class Held:
    """The control entries one command holds read-only."""

    mounts: list[str] = field(default_factory=list)
    protected: list[Path] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    """Control names that are symbolic links: their own name cannot be held read-only."""


@dataclass
class _Workspace:
    lock_fd: int
    users: int = 0
    idle_since: float | None = None


class Placeholders:
    """Empty stand-ins for the control files and folders a workspace does not have, shared by
    every command of this process (and, through a lock file in the runtime dir, of every
    agentls process) that runs in that workspace."""

    def __init__(self, state_dir: Path):
        self._dir = state_dir
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._open: dict[Path, _Workspace] = {}
        self._sweeper: threading.Thread | None = None

    def hold(self, workspace: Path, *, skip: frozenset[str] = frozenset(), create: bool = True) -> Held:
        """Hold every control name of `workspace` read-only for one command; `release` ends it.
        `create=False`: only those that exist (no placeholder for the others)."""
        workspace = Path(os.path.realpath(workspace))
        with self._lock:
            state = self._open.get(workspace)
            if state is None:
                state = _Workspace(self._lock_file(workspace))
                self._open[workspace] = state
            state.idle_since = None
            fcntl.flock(state.lock_fd, fcntl.LOCK_EX)
            try:
                held = self._hold(workspace, state.lock_fd, skip, create)
            finally:
                fcntl.flock(state.lock_fd, fcntl.LOCK_SH)
            state.users += 1
            return held

    def release(self, workspace: Path) -> None:
        """One command has ended; once none holds the workspace, its placeholders go a little
        later (`SWEEP_AFTER_S`), off the command's path."""
        workspace = Path(os.path.realpath(workspace))
        with self._lock:
            state = self._open.get(workspace)
            if state is None or state.users == 0:
                return
            state.users -= 1
            if state.users == 0:
                fcntl.flock(state.lock_fd, fcntl.LOCK_UN)  # other processes may see it idle
                state.idle_since = time.monotonic()
                if self._sweeper is None:
                    self._sweeper = threading.Thread(target=self._sweep_idle, daemon=True)
                    self._sweeper.start()
                self._idle.notify()

    def _sweep_idle(self) -> None:
        with self._lock:
            while True:
                idle = [(s.idle_since, w) for w, s in self._open.items() if s.idle_since]
                if not idle:
                    self._idle.wait()
                    continue
                since, workspace = min(idle)
                wait = since + SWEEP_AFTER_S - time.monotonic()
                if wait > 0:
                    self._idle.wait(wait)
                    continue
                self._sweep(workspace)

    def sweep(self, workspace: Path) -> None:
        """Remove the workspace's placeholders now if no command holds them (in this process
        or, through the lock, another)."""
        workspace = Path(os.path.realpath(workspace))
        with self._lock:
            self._sweep(workspace)

    def _sweep(self, workspace: Path) -> None:
        state = self._open.get(workspace)
        if state is None or state.users > 0:
            return
        del self._open[workspace]
        try:
            fcntl.flock(state.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(state.lock_fd)  # another process still runs a command there
            return
        try:
            _remove(_listed(state.lock_fd))
            os.ftruncate(state.lock_fd, 0)
        finally:
            os.close(state.lock_fd)

    def running(self, path: Path) -> bool:
        """Whether a sandboxed command may be running where it could change `path`: one of this
        process in a workspace above or below it, or one of any agentls process in a workspace
        that holds it."""
        with self._lock:
            for workspace, state in self._open.items():
                related = workspace == path or workspace in path.parents or path in workspace.parents
                if state.users > 0 and related:
                    return True
        for folder in (path, *path.parents):
            if self._locked_elsewhere(folder):
                return True
        return False

    def _locked_elsewhere(self, workspace: Path) -> bool:
        try:
            fd = os.open(self._dir / _lock_name(workspace), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)  # closing drops the probe's lock
        return False

    def sweep_all(self) -> None:
        for workspace in list(self._open):
            self.sweep(workspace)

    def _lock_file(self, workspace: Path) -> int:
        private_dir(self._dir)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        return os.open(self._dir / _lock_name(workspace), flags, 0o600)

    def _hold(self, workspace: Path, lock_fd: int, skip: frozenset[str], create: bool) -> Held:
        held = Held()
        created: list[Path] = []
        for name in CONTROL_NAMES:
            if name in skip:
                continue
            path = workspace / name
            kind = _kind(path)
            if kind is None and create:
                kind = _create(path, folder=name in CONTROL_DIRS)
                if kind == "made":
                    created.append(path)
            if kind == "link":
                held.links.append(name)
                continue
            if kind is None:
                continue
            held.mounts += ["--ro-bind", str(path), str(path)]
            held.protected.append(path)
        if created:
            os.lseek(lock_fd, 0, os.SEEK_END)
            os.write(lock_fd, b"".join(os.fsencode(p) + b"\n" for p in created))
        return held


def _lock_name(workspace: Path) -> str:
    return f"{hashlib.sha256(os.fsencode(workspace)).hexdigest()[:24]}.placeholders"


def _kind(path: Path) -> str | None:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return "link" if stat.S_ISLNK(mode) else "here"


def _create(path: Path, *, folder: bool) -> str | None:
    """`made` when the placeholder was created here, what is there when something else was
    first, None when it cannot be made (a read-only workspace: nothing can create it there)."""
    try:
        if folder:
            os.mkdir(path, 0o755)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            os.close(os.open(path, flags, 0o644))
    except FileExistsError:
        return _kind(path)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return None
        raise
    return "made"


def _listed(fd: int) -> list[Path]:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return [Path(os.fsdecode(line)) for line in b"".join(chunks).splitlines() if line]


def _remove(paths: list[Path]) -> None:
    """Remove the placeholders that are still empty placeholders; anything else stays."""
    for path in dict.fromkeys(paths):
        try:
            info = os.lstat(path)
        except OSError:
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(path)
            elif stat.S_ISREG(info.st_mode) and info.st_size == 0:
                os.unlink(path)

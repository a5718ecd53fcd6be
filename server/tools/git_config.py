"""The keys of the config git would read in a folder: listed by git, and listed again only when
a file that config may come from has changed.

Listing the config is a git process (~2 ms) before each of agentls's own git calls. A listing is
kept with the stat of every file it came from, every file an include names (there or not), the
user's global files and the repository's own: `config`, `config.worktree`, `HEAD` (for
`onbranch:` includes), `commondir` and the `.git` entry found above the folder. Any difference
(inode, size, mtime, ctime, a file appearing) lists again. ctime cannot be set back from user
space, so a rewrite that keeps the size and restores the mtime still shows; but timestamps are
coarse, so a listing is kept only when every file it depends on last changed more than
`racy_ns` before the listing began (git's rule for racily clean index entries). Windows keeps
no listing: its ctime is the creation time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

LIST_TIMEOUT_S = 5
RACY_NS = 2_000_000_000
KEPT = 64

Stamp = tuple[int, int, int, int, int] | None


def run_bounded(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float
) -> subprocess.CompletedProcess[bytes]:
    """Run `argv` to its end and capture its output; kill it after `timeout_s` and raise
    TimeoutExpired. subprocess.run's own timeout polls for the exit in sleeps of 0.5 ms and
    longer once the output has ended, which cost ~1 ms per git call."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        proc.kill()

    timer = threading.Timer(timeout_s, expire)
    timer.start()
    try:
        out, err = proc.communicate()
    finally:
        timer.cancel()
    if expired.is_set():
        raise subprocess.TimeoutExpired(argv, timeout_s, out, err)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def repository(cwd: Path) -> tuple[Path, list[Path]] | None:
    """The work tree's top above `cwd` and the files of its repository git reads config from;
    None outside a repository."""
    for top in (cwd, *cwd.parents):
        dot_git = top / ".git"
        if dot_git.is_dir():
            git_dir = dot_git
            break
        if dot_git.is_file():
            linked = dot_git.read_text(errors="replace").partition("gitdir:")[2].strip()
            git_dir = top / linked
            break
    else:
        return None
    common = git_dir
    if (git_dir / "commondir").is_file():
        common = git_dir / (git_dir / "commondir").read_text(errors="replace").strip()
    names = ("config", "config.worktree", "HEAD", "commondir")
    return top, [*(git_dir / n for n in names), common / "config"]


def user_files(env: dict[str, str]) -> list[Path]:
    home = Path(env.get("HOME") or Path.home())
    xdg = env.get("XDG_CONFIG_HOME")
    return [home / ".gitconfig", (Path(xdg) if xdg else home / ".config") / "git" / "config"]


@dataclass(frozen=True)
class Listing:
    keys: list[str]
    origins: list[Path]
    includes: list[Path]
    exact: bool = True
    """False when an include names a path this module does not resolve (`~user/`, `%(prefix)`)."""


def parse_listing(raw: bytes, *, top: Path, home: Path) -> Listing:
    """`git config --list --show-origin -z`: origin NUL, then key (LF value) NUL, per entry."""
    fields = raw.decode("utf-8", "replace").split("\0")
    keys, origins, includes, exact = [], [], [], True
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        keys.append(key)
        if not origin.startswith("file:"):
            continue
        source = top / origin[len("file:") :]
        origins.append(source)
        if key == "include.path" or (key.startswith("includeif.") and key.endswith(".path")):
            if value.startswith(("~", "%(")) and not value.startswith("~/"):
                exact = False
            target = home / value[2:] if value.startswith("~/") else source.parent / value
            includes.append(target)
    return Listing(keys, origins, includes, exact)


@dataclass
class ConfigListings:
    """Config listings kept per folder (see the module docstring); one per process."""

    racy_ns: int = RACY_NS
    keep: bool = os.name != "nt"
    _kept: OrderedDict[tuple[str, ...], tuple[tuple, tuple, list[str]]] = field(
        default_factory=OrderedDict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def keys(self, cwd: Path, env: dict[str, str]) -> list[str]:
        """Every key of the config git would read in `cwd` (includes followed). Runs nothing
        but git itself."""
        slot = (str(cwd), env.get("HOME", ""), env.get("XDG_CONFIG_HOME", ""), env.get("PATH", ""))
        found = repository(cwd)
        top, own = found if found else (cwd, [])
        base = tuple(str(p) for p in dict.fromkeys([*user_files(env), *own]))
        with self._lock:
            kept = self._kept.get(slot)
        if kept is not None and kept[0] == base and kept[1] == _stamped(p for p, _ in kept[1]):
            return kept[2]
        began = time.time_ns()
        listing = _list(cwd, env, top)
        if listing is None:
            return []
        paths = dict.fromkeys([*base, *map(str, listing.origins), *map(str, listing.includes)])
        stamps = _stamped(paths)
        if self.keep and self._settled(stamps, listing, began):
            with self._lock:
                self._kept[slot] = (base, stamps, listing.keys)
                self._kept.move_to_end(slot)
                while len(self._kept) > KEPT:
                    self._kept.popitem(last=False)
        return listing.keys

    def _settled(self, stamps: tuple, listing: Listing, began: int) -> bool:
        """Every file the listing came from is still there, and none changed lately."""
        by_path = dict(stamps)
        if not listing.exact or any(by_path.get(str(p)) is None for p in listing.origins):
            return False
        newest = max((max(s[3], s[4]) for _, s in stamps if s is not None), default=0)
        return newest < began - self.racy_ns


def _stamped(paths) -> tuple[tuple[str, Stamp], ...]:
    return tuple((p, stamp(Path(p))) for p in paths)


def _list(cwd: Path, env: dict[str, str], top: Path) -> Listing | None:
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:
        return None
    argv = [git, "config", "--list", "--show-origin", "-z"]
    try:
        done = run_bounded(argv, cwd=cwd, env=env, timeout_s=LIST_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_listing(done.stdout, top=top, home=Path(env.get("HOME") or Path.home()))


LISTINGS = ConfigListings()

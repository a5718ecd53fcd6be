"""What a path really is: its real location (symlinks resolved), how the filesystem compares
names (case-insensitive on macOS and Windows, probed), whether it is a secret, a control file
or shares its data with other names (hard links)."""

from __future__ import annotations

import errno
import os
import stat
from functools import lru_cache
from pathlib import Path

CONTROL_DIRS = (".agentls", ".claude", ".agents", ".git", ".vscode", ".idea", ".zed", ".devcontainer")
CONTROL_FILES = (".mcp.json", "agents.md", "claude.md", ".gitmodules", ".envrc")
CONTROL_NAMES = (*CONTROL_DIRS, ".mcp.json", "AGENTS.md", "CLAUDE.md", ".gitmodules", ".envrc")
"""The control files and folders as the programs that read them spell them (folders first)."""


def real(path: Path) -> Path | None:
    """The path with every symlink resolved; None for a loop or an unreadable link."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


@lru_cache(maxsize=256)
def case_insensitive(folder: Path) -> bool:
    """Whether names under `folder` compare case-insensitively (probed on the folder itself or
    the nearest parent whose name has letters)."""
    for candidate in (folder, *folder.parents):
        name = candidate.name
        if name.lower() != name.upper():
            other = candidate.with_name(name.swapcase())
            try:
                return os.path.samefile(candidate, other)
            except OSError:
                return False
    return os.name == "nt"


def workspace_parts(
    path: Path, root: Path, *, resolved: Path | None = None
) -> tuple[str, ...] | None:
    """The parts of the real `path` below the real `root`, case-folded where the filesystem
    folds case; None when it is outside. `resolved`: the real path already judged (a decision
    resolves each path once: a symlink may lead elsewhere a moment later)."""
    target, base = resolved or real(path), real(root)
    if target is None or base is None:
        return None
    fold = case_insensitive(base)
    a = [p.casefold() if fold else p for p in target.parts]
    b = [p.casefold() if fold else p for p in base.parts]
    if a[: len(b)] != b:
        return None
    return tuple(p.casefold() for p in a[len(b):]) if fold else tuple(a[len(b):])


def env_file(parts: tuple[str, ...]) -> bool:
    return any(p.casefold().startswith(".env") for p in parts)


def git_dir(parts: tuple[str, ...]) -> bool:
    return any(p.casefold() == ".git" for p in parts)


def control_file(parts: tuple[str, ...]) -> str | None:
    """The control file or folder among `parts` (agentls's and other agents' config, skills,
    instructions, MCP servers, editors' settings and tasks, git's own files, direnv, dev
    containers), or None."""
    for part in parts:
        if part.casefold() in CONTROL_DIRS:
            return part
    if parts and parts[-1].casefold() in CONTROL_FILES:
        return parts[-1]
    return None


def hard_linked(path: Path) -> bool:
    """A regular file with more names than this one: writing it changes the others too."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return info.st_nlink > 1 and not os.path.isdir(path)


class Swapped(Exception):
    """The path no longer leads where the permission check saw it lead."""


def opened_as_judged(path: Path, root: Path, judged: Path | None) -> Path | None:
    """The real path to open: the one the permission check saw (`judged`), or `Swapped` when
    the path leads elsewhere now; None when it cannot be resolved (the open reports why)."""
    target = real(path)
    if target is None or judged is None or target == judged:
        return target
    where = "outside the workspace" if workspace_parts(target, root) is None else str(target)
    raise Swapped(f"{path} now leads {where}: a symlink changed after the permission check")


def open_nofollow(path: Path, flags: int, mode: int = 0o666) -> int:
    """`os.open` of a real path that refuses a symlink at every component (each folder is opened
    with O_NOFOLLOW relative to its parent), so a swap after `opened_as_judged` fails the open
    instead of redirecting it. Platforms without `dir_fd` open the path directly."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow or os.open not in os.supports_dir_fd:
        return os.open(path, flags, mode)
    directory = getattr(os, "O_DIRECTORY", 0)
    fd = os.open(path.anchor or "/", os.O_RDONLY | directory)
    try:
        for part in path.parts[1:-1]:
            next_fd = _open_step(path, part, os.O_RDONLY | directory | nofollow, 0, fd)
            os.close(fd)
            fd = next_fd
        return _open_step(path, path.name, flags | nofollow, mode, fd)
    finally:
        os.close(fd)


def check_links(fd: int, path: Path) -> None:
    """The opened file has no other name: `Swapped` when it was replaced by a hard link."""
    if os.fstat(fd).st_nlink > 1:
        raise Swapped(f"{path} was replaced by a hard link after the permission check")


def mkdirs_nofollow(path: Path) -> None:
    """Create the real path `path` and its missing parents one component at a time, each
    relative to its parent's descriptor and opened with O_NOFOLLOW, so a symlink swapped in
    cannot lead the creation out of the workspace (`Swapped`)."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow or os.mkdir not in os.supports_dir_fd:
        path.mkdir(parents=True, exist_ok=True)
        return
    folder = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow
    fd = os.open(path.anchor or "/", folder)
    try:
        for part in path.parts[1:]:
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            next_fd = _open_folder(path, part, folder, fd)
            os.close(fd)
            fd = next_fd
    finally:
        os.close(fd)


def _open_folder(path: Path, name: str, flags: int, fd: int) -> int:
    try:
        return os.open(name, flags, dir_fd=fd)
    except OSError:
        if stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode):
            raise Swapped(f"{path} changed while it was created (a symlink appeared)") from None
        raise


def _open_step(path: Path, name: str, flags: int, mode: int, fd: int) -> int:
    try:
        return os.open(name, flags, mode, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Swapped(f"{path} changed while it was opened (a symlink appeared)") from None
        raise

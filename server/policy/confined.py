"""One confined resolver: a path is opened beneath a root folder's descriptor and never through
a symlink, so a folder swapped for a link after a check fails the call instead of leading it
elsewhere.

Linux 5.6+ resolves with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` in one call; elsewhere
each folder is opened relative to its parent with `O_NOFOLLOW`. Writes go to a temporary file
beside the target and are renamed over it beneath the parent's descriptor; deletes unlink the
name relative to that descriptor. Platforms without `dir_fd` fall back to plain calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path, PurePath

RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
SYS_OPENAT2 = 437  # the same number on every Linux architecture
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
FOLDER = os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC


class Escaped(OSError):
    """The path leaves its root or passes through a symlink."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_openat2_works: bool | None = None


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc() if os.name == "posix" else None
SUPPORTED = bool(NOFOLLOW) and os.open in os.supports_dir_fd


def parts_beneath(path: Path, root: Path) -> tuple[str, ...]:
    """`path`'s components below `root` (both absolute; compared lexically); Escaped when it is
    not below it or names `..`."""
    try:
        rel = PurePath(os.path.normpath(path)).relative_to(os.path.normpath(root))
    except ValueError:
        raise Escaped(errno.EXDEV, f"{path} is not inside {root}") from None
    parts = rel.parts
    if any(p in ("..", ".", "") for p in parts) or "\0" in str(path):
        raise Escaped(errno.EXDEV, f"{path} is not inside {root}")
    return parts


def open_at(dir_fd: int, parts: tuple[str, ...], flags: int, mode: int = 0o666) -> int:
    """Open `parts` beneath `dir_fd`, refusing a symlink at every component (Escaped)."""
    global _openat2_works
    if not parts:
        return os.dup(dir_fd)
    if _openat2_works is not False and _LIBC is not None:
        fd = _openat2(dir_fd, "/".join(parts), flags | CLOEXEC, mode)
        if fd is not None:
            return fd
    return _walk(dir_fd, parts, flags, mode)


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int | None:
    """The descriptor, or None when the kernel has no openat2."""
    global _openat2_works
    assert _LIBC is not None
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
    fd = _LIBC.syscall(SYS_OPENAT2, dir_fd, os.fsencode(rel), ctypes.byref(how), ctypes.sizeof(how))
    if fd >= 0:
        _openat2_works = True
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and not _openat2_works:
        _openat2_works = False  # no openat2 here (or a seccomp filter refuses it)
        return None
    if err in (errno.ELOOP, errno.EXDEV) or (err == errno.ENOTDIR and _is_link(dir_fd, rel)):
        raise Escaped(err, f"{rel} passes through a symlink or leaves its folder")
    raise OSError(err, os.strerror(err), rel)


def _walk(dir_fd: int, parts: tuple[str, ...], flags: int, mode: int) -> int:
    fd = os.dup(dir_fd)
    try:
        for part in parts[:-1]:
            next_fd = _step(fd, part, FOLDER, 0)
            os.close(fd)
            fd = next_fd
        return _step(fd, parts[-1], flags | NOFOLLOW | CLOEXEC, mode)
    finally:
        os.close(fd)


def _step(fd: int, name: str, flags: int, mode: int) -> int:
    try:
        return os.open(name, flags, mode, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, name):
            raise Escaped(errno.ELOOP, f"{name} is a symlink") from None
        raise


def _is_link(fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def parent_of(path: Path, root: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """(a descriptor of `path`'s folder opened beneath `root`, the file's name); `create` makes
    missing folders one at a time, never through a link."""
    parts = parts_beneath(path, root)
    if not parts:
        raise Escaped(errno.EXDEV, f"{path} is its root, not a file beneath it")
    root_fd = os.open(root, os.O_RDONLY | DIRECTORY | CLOEXEC)
    try:
        fd = _folder(root_fd, parts[:-1], create=create)
    finally:
        os.close(root_fd)
    try:
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _folder(root_fd: int, parts: tuple[str, ...], *, create: bool) -> int:
    if not create:
        return open_at(root_fd, parts, FOLDER)
    fd = os.dup(root_fd)
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            next_fd = open_at(fd, (part,), FOLDER)
            os.close(fd)
            fd = next_fd
        return os.dup(fd)
    finally:
        os.close(fd)


def _refuse_link(fd: int, name: str) -> None:
    if _is_link(fd, name):
        raise Escaped(errno.ELOOP, f"{name} is a symlink")


def read_beneath(path: Path, root: Path) -> bytes:
    if not SUPPORTED:
        return path.read_bytes()
    with parent_of(path, root) as (fd, name):
        file = open_at(fd, (name,), os.O_RDONLY)
    with os.fdopen(file, "rb") as f:
        return f.read()


def write_beneath(path: Path, root: Path, data: bytes, *, create_folders: bool = False) -> None:
    """Write `data` to a temporary file beside `path` and rename it over `path`, both beneath
    the folder's descriptor; a link at the target or in any folder is refused."""
    if not SUPPORTED:
        path.write_bytes(data)
        return
    with parent_of(path, root, create=create_folders) as (fd, name):
        _refuse_link(fd, name)
        try:
            keep = stat.S_IMODE(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            keep = None
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        out = os.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o666, dir_fd=fd
        )
        try:
            with os.fdopen(out, "wb") as f:
                f.write(data)
                if keep is not None:
                    os.fchmod(f.fileno(), keep)
            os.rename(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=fd)
            raise


def unlink_beneath(path: Path, root: Path) -> None:
    """Delete `path` (missing is fine) by its name in its folder's descriptor."""
    if not SUPPORTED:
        path.unlink(missing_ok=True)
        return
    try:
        with parent_of(path, root) as (fd, name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return  # its folder is gone too

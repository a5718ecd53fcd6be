"""Opening files as the permission check judged them: the real path, with no symlink swapped
in since (`server.policy.paths`), so a racing job cannot redirect a read or a write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from server.policy.paths import (
    Swapped,
    check_links,
    mkdirs_nofollow,
    open_nofollow,
    opened_as_judged,
)

from .base import ToolContext, ToolError


def open_judged(ctx: ToolContext, path: Path, flags: int) -> BinaryIO:
    flags |= getattr(os, "O_BINARY", 0)
    truncate = flags & os.O_TRUNC
    flags &= ~os.O_TRUNC  # truncated only once the opened file is known to be the judged one
    try:
        target = opened_as_judged(path, ctx.cwd, ctx.judged.get(path))
        fd = os.open(path, flags, 0o666) if target is None else open_nofollow(target, flags)
    except Swapped as exc:
        raise ToolError(str(exc)) from None
    writing = flags & (os.O_WRONLY | os.O_RDWR)
    try:
        if writing and path in ctx.judged and ctx.judged[path] not in ctx.shared:
            check_links(fd, path)
        if truncate:
            os.ftruncate(fd, 0)
    except Swapped as exc:
        os.close(fd)
        raise ToolError(str(exc)) from None
    return os.fdopen(fd, "wb" if writing else "rb")


def make_parents(ctx: ToolContext, path: Path) -> None:
    """Create the missing folders of a file about to be written, where the check saw them."""
    judged = ctx.judged.get(path)
    try:
        if judged is not None:
            opened_as_judged(path.parent, ctx.cwd, judged.parent)
        mkdirs_nofollow(judged.parent if judged is not None else path.parent)
    except Swapped as exc:
        raise ToolError(str(exc)) from None


def read_judged(ctx: ToolContext, path: Path) -> bytes:
    with open_judged(ctx, path, os.O_RDONLY) as f:
        return f.read()


def write_judged(ctx: ToolContext, path: Path, data: bytes) -> None:
    with open_judged(ctx, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) as f:
        f.write(data)

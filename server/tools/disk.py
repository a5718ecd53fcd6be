"""Opening files as the permission check judged them: the real path, with no symlink swapped
in since (`server.policy.paths`), so a racing job cannot redirect a read or a write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from server.policy.paths import Swapped, open_nofollow, opened_as_judged

from .base import ToolContext, ToolError


def open_judged(ctx: ToolContext, path: Path, flags: int) -> BinaryIO:
    flags |= getattr(os, "O_BINARY", 0)
    try:
        target = opened_as_judged(path, ctx.cwd, ctx.judged.get(path))
        fd = os.open(path, flags, 0o666) if target is None else open_nofollow(target, flags)
    except Swapped as exc:
        raise ToolError(str(exc)) from None
    return os.fdopen(fd, "wb" if flags & os.O_WRONLY else "rb")


def read_judged(ctx: ToolContext, path: Path) -> bytes:
    with open_judged(ctx, path, os.O_RDONLY) as f:
        return f.read()


def write_judged(ctx: ToolContext, path: Path, data: bytes) -> None:
    with open_judged(ctx, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) as f:
        f.write(data)

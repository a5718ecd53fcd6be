"""The file tools' side of checkpoints (`server.tools.checkpoint_store`): what a file held
before a tool overwrites it, and keeping each change, with a `checkpoint` update on a turn's
first change of a file."""

from __future__ import annotations

import logging
from pathlib import Path

from protocol.updates import Checkpoint
from server.tools.checkpoint_store import read_bytes

from .base import ToolContext

log = logging.getLogger(__name__)


def keep_change(ctx: ToolContext, path: Path, before: bytes | None, after: bytes) -> None:
    """After a file tool wrote `path`: keep the change for rewind, and on the turn's first
    change of the file tell the client the turn can be undone (a `checkpoint` update)."""
    if ctx.checkpoints is None or ctx.sink is None:
        return
    turn = ctx.sink.turn_id
    try:
        first = ctx.checkpoints.record(turn, path.resolve(), before, after)
    except (OSError, ValueError) as exc:  # ValueError: a session id that is not one
        log.warning("could not keep a checkpoint of %s: %s", path, exc)
        return
    if first:
        ctx.sink.emit(Checkpoint(files=ctx.checkpoints.turn_files(turn)))


def disk_bytes(ctx: ToolContext, path: Path) -> bytes | None:
    """What a file holds before a tool overwrites it; None when there is none to keep."""
    if ctx.checkpoints is None:
        return None
    return read_bytes(ctx.judged.get(path) or path.resolve())

"""File access through an ACP client's `fs/read_text_file` / `fs/write_text_file`.

Set as the native engine's `ToolContext.files` when the client advertises the `fs` capabilities,
so the file tools see the editor's unsaved buffers and their writes land in the editor. Only
paths inside the session's cwd go to the editor, and only reads of files that exist on disk
(a client answers "" for a file it has no buffer of, which would read as an empty file); anything
else, and any error the client answers with, falls back to the disk. Each request waits until
the updates queued before it (the tool call it serves) are on the wire.

The editor opens the path itself, following any symlink it meets, so a folder swapped for a
symlink between agentls's check and the editor's open would lead it outside the workspace. The
editor gets the real path agentls judged, and nothing goes to it while a sandboxed command
(which runs unasked, and could make such a swap) may be running in the workspace: agentls
then reads and writes the disk itself, where every folder is opened without following links.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class EditorFiles:
    """The `ToolContext.files` of one ACP session."""

    def __init__(
        self,
        conn: Any,
        session_id: str,
        cwd: Path,
        *,
        read: bool,
        write: bool,
        flush: Callable[[], Awaitable[None]],
        racing: Callable[[Path], bool] = lambda path: False,
    ):
        self.conn = conn
        self.racing = racing
        """Whether something that runs unasked may be changing the files around a path."""
        self.flush = flush
        self.session_id = session_id
        self.cwd = cwd
        self.read = read
        self.write = write

    def _inside(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.cwd.resolve())
        except (ValueError, OSError, RuntimeError):
            return False
        return not self.racing(path)

    async def read_text(self, path: Path) -> str | None:
        if not self.read or not self._inside(path) or not path.is_file():
            return None
        await self.flush()
        try:
            response = await self.conn.read_text_file(
                session_id=self.session_id, path=os.path.normpath(path)
            )
        except Exception as exc:
            log.debug("fs/read_text_file %s failed (%s); reading the disk", path, exc)
            return None
        return response.content

    async def write_text(self, path: Path, text: str) -> bool:
        if not self.write or not self._inside(path):
            return False
        await self.flush()
        try:
            await self.conn.write_text_file(
                session_id=self.session_id, path=os.path.normpath(path), content=text
            )
        except Exception as exc:
            log.debug("fs/write_text_file %s failed (%s); writing the disk", path, exc)
            return False
        return True

"""A background job's output on disk, at most `cap` bytes: once it passes the cap, the older
half goes. A thread pumps the job's stdout into the file; readers ask for what follows an
absolute offset and learn whether some of it was dropped in between."""

from __future__ import annotations

import os
import threading
from pathlib import Path

JOB_LOG_BYTES = 8_000_000
"""The default cap (`limits.jobLogBytes` in the config)."""
CHUNK = 65536


class JobLog:
    def __init__(self, path: Path, cap: int = JOB_LOG_BYTES):
        self.path, self.cap = path, max(cap, 2 * CHUNK)
        self.dropped = 0
        """Bytes removed from the front so far: the file starts at this absolute offset."""
        self.done = threading.Event()
        """Set once the job's output has ended and all of it is in the file."""
        self._lock = threading.Lock()
        self._size = 0
        path.touch()

    def pump(self, fd: int) -> None:
        """Copy `fd` (the job's stdout) into the file until it ends."""
        try:
            with self.path.open("r+b") as out:
                while chunk := os.read(fd, CHUNK):
                    with self._lock:
                        out.seek(self._size)
                        out.write(chunk)
                        self._size += len(chunk)
                        if self._size > self.cap:
                            self._trim(out)
                        out.flush()
        finally:
            self.done.set()

    def _trim(self, out) -> None:
        keep = self.cap // 2
        out.seek(self._size - keep)
        tail = out.read(keep)
        out.seek(0)
        out.write(tail)
        out.truncate(keep)
        self.dropped += self._size - keep
        self._size = keep

    def read_from(self, offset: int) -> tuple[bytes, int, bool]:
        """(what the job printed from absolute `offset` on, as far as it is kept; the absolute
        end of it; whether output after `offset` was dropped before it could be read)."""
        with self._lock, self.path.open("rb") as f:
            start = max(offset, self.dropped)
            f.seek(start - self.dropped)
            data = f.read(self._size - (start - self.dropped))
        return data, start + len(data), start > offset

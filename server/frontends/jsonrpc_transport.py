"""The byte side of the native front door beyond framing (`lsp_frames`): coalesced writes to
stdout, and which methods are notifications."""

from __future__ import annotations

import asyncio
from typing import BinaryIO

from lsprotocol import types as lsp

from protocol.methods import BY_NAME


class CoalescingWriter:
    """Frames written in one event-loop iteration reach stdout in one write (and one flush):
    a burst of events costs one system call, and no frame waits beyond the current iteration."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:
                self._pending.append(data)
                self.flush()
                return
        self._pending.append(data)

    def flush(self) -> None:
        if self._pending:
            data, self._pending = b"".join(self._pending), []
            self._stream.write(data)
            self._stream.flush()

    def close(self) -> None:
        self.flush()
        self._stream.close()


def is_notification(method: str) -> bool:
    if method in BY_NAME:
        return BY_NAME[method].is_notification
    types = lsp.METHOD_TO_TYPES.get(method)
    return types is not None and types[1] is None

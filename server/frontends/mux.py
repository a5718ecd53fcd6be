"""The byte streams of a print or stream-json run on a resident server, over one socket.

After `connection/attach` with `door: "print"`, both sides send frames of one channel byte,
a 4-byte big-endian length and the payload: the bridge sends stdin (an empty payload is its
end) and the signals it receives; the server sends stdout, stderr and, last, the exit code.
Standard library only (the bridge imports it).
"""

from __future__ import annotations

import struct

STDIN = 0
STDOUT = 1
STDERR = 2
EXIT = 3
SIGNAL = 4
HEADER = struct.Struct(">BI")
MAX_PAYLOAD = 64 * 1024 * 1024


def pack(channel: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(channel, len(payload)) + payload


def pack_int(channel: int, value: int) -> bytes:
    return pack(channel, struct.pack(">i", value))


def as_int(payload: bytes) -> int:
    return struct.unpack(">i", payload)[0]


class Unpacker:
    """Feed it bytes as they come; it hands back whole frames."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self._buf += data
        frames = []
        while len(self._buf) >= HEADER.size:
            channel, length = HEADER.unpack_from(self._buf)
            if length > MAX_PAYLOAD:
                raise ValueError(f"a frame of {length} bytes is over the limit")
            end = HEADER.size + length
            if len(self._buf) < end:
                break
            frames.append((channel, bytes(self._buf[HEADER.size : end])))
            del self._buf[:end]
        return frames

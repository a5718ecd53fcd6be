"""The seccomp filter every sandboxed command runs under (Linux, x86-64 and arm64).

The sandbox's read-only view of the machine does not stop `connect()` on a Unix socket, so a
command could reach any socket on the host (the resident server, ssh-agent, docker, the session
bus). The filter refuses, with EPERM:
- `socket(AF_UNIX, …)`: no new Unix socket, so no path or abstract address can be reached;
- `socketpair(AF_UNIX, SOCK_DGRAM, …)`: a datagram pair may be connected to another address;
  stream and seqpacket pairs cannot (programs use those to talk to their own children);
- `io_uring_setup` (io_uring makes sockets without the `socket` call) and `pidfd_getfd` (takes
  a file descriptor from another process).
A call made through another architecture's system call table (32-bit `int 0x80`, x32) would
dodge the argument checks, so such a process is killed.

The program is classic BPF as `prctl(PR_SET_SECCOMP)` and `bwrap --seccomp FD` load it.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

AF_UNIX = 1
SOCK_DGRAM = 2
SOCK_TYPE_MASK = 0xF

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_EPERM = 0x00050000 | errno.EPERM

_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (low words)


@dataclass(frozen=True)
class Arch:
    audit: int
    socket: int
    socketpair: int
    io_uring_setup: int
    pidfd_getfd: int
    foreign_from: int | None = None
    """System call numbers from here on belong to another ABI of the same arch (x32)."""


ARCHES = {
    "x86_64": Arch(0xC000003E, 41, 53, 425, 438, foreign_from=0x40000000),
    "aarch64": Arch(0xC00000B7, 198, 199, 425, 438),
}
ARCHES["amd64"] = ARCHES["x86_64"]
ARCHES["arm64"] = ARCHES["aarch64"]


def host_arch() -> Arch | None:
    return ARCHES.get(platform.machine().lower())


Line = tuple[str, int, str | int, str | int, int]
"""(label or "", opcode, jump if true, jump if false, operand); a jump is a label or 0."""


def program(arch: Arch) -> bytes:
    """The filter for `arch`, as `struct sock_filter[]` bytes."""
    code: list[Line] = [
        ("", _LD_ABS, 0, 0, _ARCH),
        ("", _JEQ, 0, "kill", arch.audit),
        ("", _LD_ABS, 0, 0, _NR),
    ]
    if arch.foreign_from is not None:
        code.append(("", _JGE, "kill", 0, arch.foreign_from))
    code += [
        ("", _JEQ, "socket", 0, arch.socket),
        ("", _JEQ, "pair", 0, arch.socketpair),
        ("", _JEQ, "deny", 0, arch.io_uring_setup),
        ("", _JEQ, "deny", 0, arch.pidfd_getfd),
        ("", _RET, 0, 0, RET_ALLOW),
        ("socket", _LD_ABS, 0, 0, _ARG0),
        ("", _JEQ, "deny", 0, AF_UNIX),
        ("", _RET, 0, 0, RET_ALLOW),
        ("pair", _LD_ABS, 0, 0, _ARG0),
        ("", _JEQ, 0, "allow", AF_UNIX),
        ("", _LD_ABS, 0, 0, _ARG1),
        ("", _AND, 0, 0, SOCK_TYPE_MASK),
        ("", _JEQ, "deny", 0, SOCK_DGRAM),
        ("allow", _RET, 0, 0, RET_ALLOW),
        ("deny", _RET, 0, 0, RET_EPERM),
        ("kill", _RET, 0, 0, RET_KILL_PROCESS),
    ]
    return _assemble(code)


def _assemble(code: list[Line]) -> bytes:
    labels = {line[0]: index for index, line in enumerate(code) if line[0]}
    out = bytearray()
    for index, (_label, op, jt, jf, k) in enumerate(code):
        out += struct.pack("<HBBI", op, _jump(labels, jt, index), _jump(labels, jf, index), k)
    return bytes(out)


def _jump(labels: dict[str, int], target: str | int, index: int) -> int:
    if isinstance(target, int):
        return target
    offset = labels[target] - index - 1
    assert 0 <= offset < 256, f"jump to {target} out of range"
    return offset


def host_program() -> bytes | None:
    """The filter for this machine; None where agentls has none for its architecture."""
    arch = host_arch()
    return program(arch) if arch is not None else None

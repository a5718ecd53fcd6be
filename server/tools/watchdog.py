"""The watchdog: a small process that kills what agentls leaves running when it ends.

agentls marks the environment of every command it starts (`AGENTLS_RUN=<mark>`), and everything
those commands start inherits the mark. The watchdog holds the read end of a pipe whose only
write end agentls holds: the pipe ends when agentls ends, however it ends (exit, crash,
`kill -9`), and the watchdog then kills every process that carries the mark. It reads /proc, so
it runs on Linux only. This file is also the watchdog's program: the standard library only.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid

VARIABLE = "AGENTLS_RUN"
_current: dict[str, object] = {}


def mark() -> str | None:
    """This process's mark, starting its watchdog on first use; None where none can run."""
    if not sys.platform.startswith("linux"):
        return None
    if _current.get("owner") != os.getpid():  # first use, or a forked child
        value = uuid.uuid4().hex
        _current.update(owner=os.getpid(), mark=value, pipe=_start(value))
    return str(_current["mark"])


def _start(value: str) -> int:
    read, write = os.pipe()  # both close on exec: the watchdog gets only `read`, as stdin
    try:
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-I", "-S", os.path.abspath(__file__), value],
            {"PATH": os.environ.get("PATH", "")},
            file_actions=[
                (os.POSIX_SPAWN_DUP2, read, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, 1, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(read)
    return write


def marked_pids(value: str) -> list[int]:
    needle = f"{VARIABLE}={value}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                if needle in handle.read().split(b"\0"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def main(value: str) -> None:
    while os.read(0, 4096):
        pass
    for _ in range(100):  # again while killed processes had forked meanwhile
        pids = marked_pids(value)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


if __name__ == "__main__":
    main(sys.argv[1])

"""Starting commands so that no cancel loses one and none outlives agentls.

Every command leads its own process group (a new session on POSIX, a new process group on
Windows), so one kill takes down everything it started. Its environment carries the mark the
watchdog (`watchdog.py`) kills by once agentls has ended. On Linux a leader started with a
`preexec_fn` (background jobs, external agents) also gets the parent-death signal, so it dies
with agentls even without the watchdog.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from server.aio import run_to_end
from server.tools import watchdog

WINDOWS = os.name == "nt"
PR_SET_PDEATHSIG = 1


class _Process(Protocol):
    @property
    def pid(self) -> int: ...


P = TypeVar("P", bound=_Process)
_closing: set[asyncio.Task] = set()


def group_options(*, hooks: bool = True) -> dict[str, Any]:
    """Popen options for a command that leads its own group and, on Linux, dies with us.
    `hooks=False` leaves out the parent-death hook (for `anyio.open_process`, which takes none)."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    options: dict[str, Any] = {"start_new_session": True}
    # The signal comes when the thread that forked the child ends, not the process: only the
    # main thread's children get it.
    main = threading.current_thread() is threading.main_thread()
    if hooks and main and sys.platform.startswith("linux"):
        options["preexec_fn"] = _dies_with(os.getpid())
    return options


def _dies_with(parent: int) -> Callable[[], None]:
    prctl = _prctl()  # looked up here: loading a library in a forked child can deadlock

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return preexec


@functools.cache
def _prctl() -> Callable[..., int]:
    return ctypes.CDLL(None, use_errno=True).prctl


def marked(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the mark the watchdog kills by when agentls ends."""
    value = watchdog.mark()
    return {**env, watchdog.VARIABLE: value} if value else dict(env)


def kill_group(pid: int, *, running: bool) -> None:
    """Kill the process group led by `pid`.

    On POSIX the group id outlives its leader while members remain, so this also kills
    processes a finished command left behind. Windows reuses pids quickly, so the tree is only
    killed while the leader is known to be running.
    """
    if WINDOWS:
        if running:
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(pid)], capture_output=True)
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def started(spawn: Awaitable[P], *, close: Callable[[P], Awaitable[Any]]) -> P:
    """The process `spawn` starts. If the caller is cancelled meanwhile (natively too), the
    process's group is killed as soon as it exists, `close` reaps it, and the cancel goes on."""
    task = asyncio.ensure_future(spawn)
    try:
        return await run_to_end(task)
    except BaseException:
        if task.done() and not task.cancelled() and task.exception() is None:
            proc = task.result()
            kill_group(proc.pid, running=True)
            closing = asyncio.ensure_future(close(proc))
            _closing.add(closing)
            closing.add_done_callback(_closing.discard)
        raise

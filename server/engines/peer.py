"""An external agent process for the `acp` and `claude-code` engines.

It runs in its own process group (a new session on POSIX, a new process group on Windows) so
that closing or aborting kills everything it started; it gets its environment explicitly; and its
stderr is drained continuously (a full pipe would hang it), keeping a tail for error messages.
`PeerTurn` runs the agent's requests (permissions, questions) inside the turn that caused them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from server.engines.base import EngineCapabilities, EngineError, SessionOffer
from server.tools.spawn import group_options, kill_group, marked, started
from server.turn import SessionSpec, TurnSink

log = logging.getLogger(__name__)

WINDOWS = os.name == "nt"
STREAM_LIMIT = 50 * 1024 * 1024


# This server's own engine choice must not leak into an agent that is agentls itself: it would
# start another agent like itself, and so on.
PRIVATE_VARIABLES = ("AGENTLS_ENGINE", "AGENTLS_ENGINE_COMMAND")


def peer_environment(environ: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """The complete environment an external agent gets (passed explicitly, never trimmed)."""
    env = {k: v for k, v in environ.items() if k not in PRIVATE_VARIABLES}
    env.update(extra)
    return env


def program_argv(command: list[str]) -> list[str]:
    """The argv to exec; Windows runs npm's `.cmd` shims through cmd.exe."""
    path = shutil.which(command[0])
    if path is None:
        raise EngineError(f"cannot start {command[0]!r}: not found on PATH")
    if WINDOWS and Path(path).suffix.lower() in (".cmd", ".bat"):
        return ["cmd.exe", "/c", path, *command[1:]]
    return [path, *command[1:]]


class PeerProcess:
    """A running external agent with piped stdio."""

    def __init__(self, proc: asyncio.subprocess.Process, name: str):
        self.proc = proc
        self.name = name
        self.stderr_tail: deque[str] = deque(maxlen=40)
        self._drain = asyncio.get_running_loop().create_task(self._drain_stderr())

    @classmethod
    async def spawn(
        cls, command: list[str], *, cwd: Path, env: dict[str, str], name: str
    ) -> PeerProcess:
        argv = program_argv(command)
        try:
            spawn = asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(cwd),
                env=marked(env),
                limit=STREAM_LIMIT,
                **group_options(),
            )
            proc = await started(spawn, close=_reap)
        except OSError as exc:
            raise EngineError(f"cannot start {' '.join(command)}: {exc}") from exc
        log.debug("%s started as pid %s: %s", name, proc.pid, argv)
        return cls(proc, name)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc.returncode is None

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.proc.stdout is not None
        return self.proc.stdout

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            text = line.decode("utf-8", errors="replace").rstrip()
            self.stderr_tail.append(text)
            log.debug("%s: %s", self.name, text)

    def exit_reason(self) -> str:
        """What went wrong, for an error message: the exit status and the stderr tail."""
        status = (
            f"exited with status {self.proc.returncode}" if not self.running else "is not answering"
        )
        tail = "\n".join(list(self.stderr_tail)[-10:])
        return f"{self.name} {status}" + (f":\n{tail}" if tail else "")

    def kill(self) -> None:
        """Kill the whole process group, leader and everything it started."""
        kill_group(self.pid, running=self.running)

    async def close(self, *, grace: float = 2.0) -> None:
        """End of input first (agents exit cleanly on EOF), then the group is killed."""
        if self.running:
            with contextlib.suppress(Exception):
                self.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), grace)
        self.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), grace)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._drain, grace)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 10)


@dataclass
class PeerTurn:
    """The turn the external agent is working on, as far as its requests are concerned."""

    sink: TurnSink
    tg: TaskGroup
    question_timeout: float = 60.0
    names: dict[str, str] = field(default_factory=dict)
    rejected: set[str] = field(default_factory=set)

    async def interact(self, ask: Callable[[], Awaitable[Any]]) -> Any:
        """Run `ask` as part of the turn; None when the turn ends first, the exception when
        it fails."""
        box: list[Any] = []
        done = anyio.Event()

        async def run() -> None:
            try:
                box.append(await ask())
            except Exception as exc:
                box.append(exc)
            finally:
                done.set()

        self.tg.start_soon(run)
        await done.wait()
        return box[0] if box else None


class ExternalEngine:
    """What the engines that drive another agent's process share: settings and environment,
    the live sessions, resuming a stored conversation by the agent's own id, and shutdown.
    Subclasses provide `_start(spec, resume=...)` and `_close(handle)`."""

    id: str
    capabilities: EngineCapabilities
    resume_key: str
    """The snapshot key that holds the agent's own session id."""
    default_cancel_grace = 2.0

    def __init__(
        self,
        settings: Any,
        *,
        environ: dict[str, str] | None = None,
        start_timeout: float = 60.0,
        cancel_grace: float | None = None,
    ):
        self.settings = settings
        self._environ = dict(os.environ if environ is None else environ)
        self.start_timeout = start_timeout
        self.cancel_grace = self.default_cancel_grace if cancel_grace is None else cancel_grace
        self._live: list[Any] = []

    async def start(self) -> None:
        return None

    async def create_session(self, spec: SessionSpec) -> Any:
        return await self._start(spec, resume=None)

    async def restore(self, spec: SessionSpec, snapshot: dict[str, Any]) -> Any:
        """A new agent process that resumes the stored conversation when its id is known."""
        return await self._start(spec, resume=snapshot.get(self.resume_key))

    def offers(self, handle: Any) -> SessionOffer:
        """The other agent's tools and commands are its own; none are listed here."""
        return SessionOffer()

    def unsent_steers(self, handle: Any) -> list[str]:
        return []  # steering is refused, so nothing is ever queued

    async def attach_mcp_servers(self, handle: Any, servers: dict[str, Any]) -> None:
        log.warning("engine %s does not run MCP servers; ignoring %s", self.id, list(servers))

    def steer(self, handle: Any, text: str) -> None:
        raise EngineError(
            f"the {self.id} engine cannot steer a running turn; send it as the next prompt"
        )

    async def close_session(self, handle: Any) -> None:
        with contextlib.suppress(ValueError):
            self._live.remove(handle)
        await self._close(handle)

    async def dispose(self) -> None:
        for handle in list(self._live):
            await self.close_session(handle)

    async def _start(self, spec: SessionSpec, *, resume: str | None) -> Any:
        raise EngineError(f"the {self.id} engine cannot start sessions")

    async def _close(self, handle: Any) -> None:
        return None

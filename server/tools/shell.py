"""Shell tools: bash (foreground or background), bash_output, kill_bash.

Every command runs in its own process group (a new session on POSIX, a new process group on
Windows) so that a timeout, a cancel or kill_bash takes down everything it started. Background
jobs live in a `BackgroundJobs` registry shared by the three tools and keyed on the session id;
the session service calls `close_session(session_id)` when a session ends and `close()` at
shutdown. `ctx.env`, when set, is merged over the server's environment.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import itertools
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from pydantic import Field

from protocol.methods import PermissionOption, ToolCallRef
from server.aio import run_to_end
from server.config import positive

from .base import Tool, ToolContext, ToolError, ToolInput
from .child_env import child_env
from .job_log import JOB_LOG_BYTES, JobLog
from .live import LIVE_OUTPUT, LiveFeed
from .netproxy import HostAsker
from .sandbox import Sandbox, blocked, blocked_hint
from .spawn import group_options, kill_group, marked, started

MAX_OUTPUT = 50_000
DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
DRAIN_GRACE_S = 1.0
REAP_TIMEOUT_S = 5.0
WINDOWS = os.name == "nt"


def shell_command(command: str) -> str | list[str]:
    """POSIX: `bash -c`. Windows: the string itself, which the platform runs through cmd.exe."""
    if WINDOWS:
        return command
    return [shutil.which("bash") or "/bin/sh", "-c", command]


@dataclass(frozen=True)
class Launch:
    """How a command starts: its argv (in the sandbox, when there is one), where, with what."""

    argv: str | list[str]
    cwd: Path
    env: dict[str, str]
    sandbox: Sandbox | None = None
    pass_fds: tuple[int, ...] = ()
    """Descriptors the command inherits (the sandbox's seccomp filter); `started()` closes
    them here once the command has them."""

    def started(self) -> None:
        for fd in self.pass_fds:
            os.close(fd)


def launch(command: str, *, cwd: Path, env: dict[str, str], sandbox: Sandbox | None) -> Launch:
    argv = shell_command(command)
    if sandbox is None or not sandbox.active or isinstance(argv, str):
        return Launch(argv, cwd, env)
    fd = sandbox.open_filter()
    wrapped = sandbox.wrap(argv, cwd=cwd, filter_fd=fd)
    fds = () if fd is None else (fd,)
    return Launch(wrapped, cwd, sandbox.environment(env), sandbox, fds)


def _environment(ctx: ToolContext) -> dict[str, str]:
    return marked(child_env(ctx.env, base=ctx.environ))


def _working_dir(ctx: ToolContext, cwd: str | None) -> Path:
    path = ctx.resolve(cwd) if cwd else ctx.cwd
    if not path.is_dir():
        raise ToolError(f"Working directory not found: {path}")
    return path


class _Tail:
    """Decoded output keeping only the last MAX_OUTPUT characters."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._chunks: list[str] = []
        self._size = 0
        self._dropped = False
        self.live = LiveFeed(self.tail)

    def feed(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        self._chunks.append(text)
        self._size += len(text)
        if text:
            self.live.grew()
        if self._size > 2 * MAX_OUTPUT:
            joined = "".join(self._chunks)[-MAX_OUTPUT:]
            self._chunks, self._size, self._dropped = [joined], len(joined), True

    def tail(self, chars: int) -> str:
        joined = "".join(self._chunks)
        self._chunks, self._size = [joined], len(joined)
        return joined[-chars:]

    def text(self) -> tuple[str, bool]:
        joined = "".join(self._chunks) + self._decoder.decode(b"", final=True)
        return joined[-MAX_OUTPUT:], self._dropped or len(joined) > MAX_OUTPUT


async def _pump(stream: ByteReceiveStream | None, out: _Tail, eof: anyio.Event) -> None:
    if stream is not None:
        async for chunk in stream:
            out.feed(chunk)
    eof.set()


async def _wait_and_drain(proc: Process, out: _Tail) -> None:
    eof = anyio.Event()
    send = LIVE_OUTPUT.get()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_pump, proc.stdout, out, eof)
        if send is not None:
            tg.start_soon(out.live.report, send)
        await proc.wait()
        # Leftover background children would hold the pipe open; they die with the command.
        kill_group(proc.pid, running=False)
        with anyio.move_on_after(DRAIN_GRACE_S):
            await eof.wait()
        tg.cancel_scope.cancel()


async def _reap(proc: Process) -> None:
    with anyio.move_on_after(REAP_TIMEOUT_S):
        await proc.aclose()


async def run_command(
    command: str,
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_ms: int,
    sandbox: Sandbox | None = None,
) -> dict[str, Any]:
    """Run a command to completion; cancelling the caller kills its whole process group."""
    how = launch(command, cwd=cwd, env=env, sandbox=sandbox)
    refusals = how.sandbox.refusals() if how.sandbox else 0
    spawn = anyio.open_process(
        how.argv,
        cwd=how.cwd,
        env=how.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        pass_fds=how.pass_fds,
        **group_options(hooks=False),
    )
    try:
        try:
            proc = await started(spawn, close=_reap)
        finally:
            how.started()
        out = _Tail()
        try:
            with anyio.move_on_after(timeout_ms / 1000) as deadline:
                await _wait_and_drain(proc, out)
        finally:
            kill_group(proc.pid, running=proc.returncode is None)
            await run_to_end(_reap(proc))
    finally:
        if how.sandbox:
            how.sandbox.release()
    text, truncated = out.text()
    if deadline.cancelled_caught:
        raise ToolError(
            f"Command timed out after {timeout_ms} ms and its process group was killed. "
            f"Output so far (last 10000 characters):\n{text[-10_000:]}"
        )
    result = {"exitCode": proc.returncode, "output": text, "truncated": truncated}
    if how.sandbox:
        refused = how.sandbox.refused_since(refusals)
        what = blocked(how.sandbox, proc.returncode, text, refused)
        if what:
            result["sandboxBlocked"] = what
            result["hint"] = blocked_hint(how.sandbox, what, refused)
    return result


@dataclass
class _Job:
    id: str
    session_id: str
    command: str
    proc: subprocess.Popen
    log: JobLog
    offset: int = 0
    killed: bool = False
    decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace")
    )

    def status(self) -> dict[str, Any]:
        code = self.proc.poll()
        state = "running" if code is None else "killed" if self.killed else "exited"
        return {"jobId": self.id, "status": state, "exitCode": code}

    def new_output(self) -> tuple[str, bool]:
        if self.proc.poll() is not None:  # its output may still be on its way to the log
            self.log.done.wait(DRAIN_GRACE_S)
        finished = self.log.done.is_set()
        data, self.offset, skipped = self.log.read_from(self.offset)
        if len(data) > 4 * MAX_OUTPUT:
            data, skipped = data[-4 * MAX_OUTPUT :], True
        if skipped:
            self.decoder.reset()
        text = self.decoder.decode(data, final=finished)
        return text[-MAX_OUTPUT:], skipped or len(text) > MAX_OUTPUT

    def kill(self) -> None:
        running = self.proc.poll() is None
        kill_group(self.proc.pid, running=running)
        if running:
            self.killed = True
        try:
            self.proc.wait(timeout=REAP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass


def _follow(proc: subprocess.Popen, log: JobLog, sandbox: Sandbox | None) -> None:
    """The job's own thread: its output into the log, then its end (the sandbox's hold)."""
    assert proc.stdout is not None
    with proc.stdout:
        log.pump(proc.stdout.fileno())
    proc.wait()
    if sandbox is not None:
        sandbox.release()


class BackgroundJobs:
    """Background shell jobs, keyed on (session id, job id); `close()` kills every job."""

    def __init__(self) -> None:
        self._jobs: dict[tuple[str, str], _Job] = {}
        self._ids = itertools.count(1)
        self._dir: Path | None = None

    def start(
        self,
        session_id: str,
        command: str,
        *,
        cwd: Path,
        env: dict[str, str],
        sandbox: Sandbox | None = None,
        log_cap: int = JOB_LOG_BYTES,
    ) -> _Job:
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="agentls-jobs-"))
        job_id = f"bash_{next(self._ids)}"
        log = JobLog(self._dir / f"{job_id}.log", log_cap)
        how = launch(command, cwd=cwd, env=env, sandbox=sandbox)
        try:
            proc = subprocess.Popen(
                how.argv,
                shell=isinstance(how.argv, str),
                cwd=how.cwd,
                env=how.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=how.pass_fds,
                **group_options(),
            )
        except BaseException:
            if how.sandbox:
                how.sandbox.release()
            raise
        finally:
            how.started()
        threading.Thread(target=_follow, args=(proc, log, how.sandbox), daemon=True).start()
        job = _Job(id=job_id, session_id=session_id, command=command, proc=proc, log=log)
        self._jobs[(session_id, job_id)] = job
        return job

    def get(self, session_id: str, job_id: str) -> _Job:
        job = self._jobs.get((session_id, job_id))
        if job is None:
            known = sorted(j for s, j in self._jobs if s == session_id)
            raise ToolError(
                f"No background job {job_id!r}; known jobs: {', '.join(known) or 'none'}"
            )
        return job

    def close_session(self, session_id: str) -> None:
        for key in [k for k in self._jobs if k[0] == session_id]:
            self._jobs.pop(key).kill()

    def close(self) -> None:
        for job in self._jobs.values():
            job.kill()
        self._jobs.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


JOBS = BackgroundJobs()
atexit.register(JOBS.close)


class BashInput(ToolInput):
    command: str = Field(description="The command line to run.")
    cwd: str | None = Field(default=None, description="Working directory (default: the workspace).")
    timeout: int | None = Field(
        default=None, ge=1, description="Timeout in milliseconds (default 120000, at most 600000)."
    )
    run_in_background: bool = Field(
        default=False, description="Start the command and return a jobId at once."
    )
    outside_sandbox: bool = Field(
        default=False,
        description="Run outside the sandbox, for a command that must reach the network or "
        "write outside the workspace. The user is asked first; use it only after the sandbox "
        "stopped the command.",
    )


class Bash(Tool):
    """Runs a shell command in its own process group."""

    name = "bash"
    description = (
        "Run a shell command (bash -c; cmd.exe on Windows) in the workspace or `cwd`. stdin is "
        "empty; stdout and stderr are merged and the last 50,000 characters returned as "
        "{exitCode, output, truncated}. A non-zero exit code is a normal result. The command is "
        "killed after `timeout` ms (default 120000, max 600000). Processes it leaves running "
        "are killed when it exits: for servers and watchers set run_in_background, which returns "
        "{jobId, pid} at once; then poll with bash_output and stop with kill_bash. Prefer "
        "read_file, grep and glob over cat, grep and find."
    )
    Input = BashInput
    kind = "execute"
    risk = "high"
    shell = True

    def __init__(self, jobs: BackgroundJobs | None = None) -> None:
        self.jobs = jobs if jobs is not None else JOBS

    def title(self, args: BashInput) -> str:
        line = args.command.strip().splitlines()[0] if args.command.strip() else ""
        short = line if len(line) <= 60 else line[:59] + "…"
        return f"Run `{short}`" + (" in background" if args.run_in_background else "")

    def paths(self, args: BashInput) -> list[str]:
        return [args.cwd] if args.cwd else []

    async def run(self, ctx: ToolContext, args: BashInput) -> dict[str, Any]:
        cwd = _working_dir(ctx, args.cwd)
        env = _environment(ctx)
        sandbox = command_sandbox(ctx, outside=args.outside_sandbox)
        if sandbox is not None and sandbox.settings.network_ask and ctx.sink is not None:
            sandbox.ask_hosts_with(host_asker(ctx.sink, asyncio.get_running_loop()))
        if args.run_in_background:
            cap = positive((ctx.config.get("limits") or {}).get("jobLogBytes"), JOB_LOG_BYTES)
            job = self.jobs.start(
                ctx.session_id, args.command, cwd=cwd, env=env, sandbox=sandbox, log_cap=int(cap)
            )
            return {"jobId": job.id, "pid": job.proc.pid}
        timeout = min(args.timeout or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        return await run_command(
            args.command, cwd=cwd, env=env, timeout_ms=timeout, sandbox=sandbox
        )


HOST_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]
HOST_ASK_TIMEOUT_S = 600.0


def host_asker(sink: Any, loop: asyncio.AbstractEventLoop) -> HostAsker:
    """Asks through the turn `sink` whether a sandboxed command may reach a host (from the
    proxy's thread); no answer in time, or a turn that has ended, is a refusal."""

    def ask(host: str, port: int) -> tuple[bool, bool]:
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        ref = ToolCallRef(
            tool_call_id=f"net_{uuid.uuid4().hex[:12]}",
            name="network",
            title=f"Connect to {shown}",
            input={"host": host, "port": port},
            reason=f'a sandboxed command wants to reach {shown} (sandbox.network is "ask")',
            risk="medium",
        )
        asked = asyncio.run_coroutine_threadsafe(sink.request_permission(ref, HOST_OPTIONS), loop)
        try:
            reply = asked.result(HOST_ASK_TIMEOUT_S)
        except Exception:  # the turn ended, the client went away, or nobody answered
            asked.cancel()
            return False, False
        chosen = reply.outcome.option_id if reply.outcome.outcome == "selected" else None
        return chosen in ("allow_once", "allow_always"), chosen == "allow_always"

    return ask


def command_sandbox(ctx: ToolContext, *, outside: bool) -> Sandbox | None:
    """The sandbox a command runs in; None to run it on the machine. A session that requires
    one refuses commands when it cannot be had, and runs inside it even those allowed out (a
    replay: what the sandbox stops shows as `sandboxBlocked`)."""
    sandbox = ctx.sandbox
    if sandbox is None:
        return None
    if sandbox.settings.required:
        if not sandbox.active:
            raise ToolError(f"Commands need a sandbox here and none can be made: {sandbox.missing}")
        return sandbox
    return None if outside else sandbox


class JobInput(ToolInput):
    jobId: str = Field(description="The jobId returned by bash with run_in_background.")


class BashOutput(Tool):
    """Returns a background job's new output and status."""

    name = "bash_output"
    description = (
        "Get the output a background bash job produced since the last bash_output call (at most "
        "the last 50,000 characters) with its status (running, exited, killed) and exitCode."
    )
    Input = JobInput
    read_only = True
    kind = "execute"

    def __init__(self, jobs: BackgroundJobs | None = None) -> None:
        self.jobs = jobs if jobs is not None else JOBS

    def title(self, args: JobInput) -> str:
        return f"Output of {args.jobId}"

    async def run(self, ctx: ToolContext, args: JobInput) -> dict[str, Any]:
        job = self.jobs.get(ctx.session_id, args.jobId)
        status = job.status()
        text, truncated = job.new_output()
        return {**status, "output": text, "truncated": truncated}


class KillBash(Tool):
    """Kills a background job's whole process group."""

    name = "kill_bash"
    description = "Stop a background bash job and every process it started."
    Input = JobInput
    kind = "execute"

    def __init__(self, jobs: BackgroundJobs | None = None) -> None:
        self.jobs = jobs if jobs is not None else JOBS

    def title(self, args: JobInput) -> str:
        return f"Stop {args.jobId}"

    async def run(self, ctx: ToolContext, args: JobInput) -> dict[str, Any]:
        job = self.jobs.get(ctx.session_id, args.jobId)
        job.kill()
        return job.status()

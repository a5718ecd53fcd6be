import asyncio
import contextlib
import os
import re
import signal
import time
from pathlib import Path

import anyio
import pytest

from server.policy.guards import command_guard
from server.tools.base import ToolContext, ToolError
from server.tools.shell import BackgroundJobs, Bash, BashOutput, KillBash

pytestmark = pytest.mark.skipif(os.name == "nt", reason="commands below are POSIX shell")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, session_id="s1")


@pytest.fixture
def jobs():
    registry = BackgroundJobs()
    yield registry
    registry.close()


async def bash(ctx: ToolContext, command: str, **kw) -> dict:
    return await Bash().run(ctx, Bash.Input(command=command, **kw))


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie waiting for a reaper counts as dead."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def all_dead(pids: list[int], within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


async def read_pids(path: Path, within: float = 30.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return [int(p) for p in path.read_text().split()]
        await anyio.sleep(0.01)
    raise AssertionError(f"{path} was never written")


# foreground


async def test_bash_returns_exit_code_and_output(ctx):
    assert await bash(ctx, "echo hi") == {"exitCode": 0, "output": "hi\n", "truncated": False}


async def test_bash_merges_stderr_and_nonzero_exit_is_a_result(ctx):
    result = await bash(ctx, "echo out; echo err >&2; exit 3")
    assert result == {"exitCode": 3, "output": "out\nerr\n", "truncated": False}


async def test_bash_runs_in_cwd_or_the_given_directory(ctx, tmp_path):
    (tmp_path / "sub dir").mkdir()
    assert (await bash(ctx, "pwd"))["output"] == f"{tmp_path}\n"
    assert (await bash(ctx, "pwd", cwd="sub dir"))["output"] == f"{tmp_path / 'sub dir'}\n"
    with pytest.raises(
        ToolError, match=re.escape(f"Working directory not found: {tmp_path / 'nope'}")
    ):
        await bash(ctx, "pwd", cwd="nope")


async def test_bash_stdin_is_empty(ctx):
    result = await bash(ctx, 'cat; read line; echo "read=$?"')
    assert result == {"exitCode": 0, "output": "read=1\n", "truncated": False}


async def test_bash_keeps_the_last_50000_characters(ctx):
    result = await bash(ctx, "head -c 120000 /dev/zero | tr '\\0' a; echo END")
    assert result["truncated"] is True
    assert len(result["output"]) == 50_000
    assert result["output"].endswith("aaaEND\n")


async def test_bash_decodes_unicode_and_replaces_invalid_bytes(ctx):
    result = await bash(ctx, "printf 'h\\303\\251llo \\342\\234\\223 \\377\\n'")
    assert result["output"] == "héllo ✓ \ufffd\n"


async def test_bash_env_is_merged_over_the_server_environment(tmp_path):
    ctx = ToolContext(cwd=tmp_path, env={"AGENTLS_TEST_VAR": "yes"})
    result = await bash(ctx, 'echo "$AGENTLS_TEST_VAR"; command -v sh >/dev/null && echo path-ok')
    assert result["output"] == "yes\npath-ok\n"


async def test_bash_killed_by_signal_reports_negative_exit_code(ctx):
    assert (await bash(ctx, "kill -9 $$"))["exitCode"] == -9


async def test_bash_timeout_kills_the_group_and_names_the_timeout(ctx, tmp_path):
    with anyio.fail_after(30), pytest.raises(ToolError, match=r"timed out after 3000 ms") as err:
        await bash(ctx, "echo started; sleep 100 & echo $! > child; sleep 100", timeout=3000)
    assert "started" in str(err.value)
    assert await all_dead(await read_pids(tmp_path / "child"))


async def test_bash_cancel_kills_the_whole_process_group(ctx, tmp_path):
    async def cancel_once_started(scope: anyio.CancelScope) -> None:
        await read_pids(tmp_path / "pids")
        scope.cancel()

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once_started, tg.cancel_scope)
            await bash(ctx, "sleep 100 & echo $! $$ > pids; sleep 100")
    pids = await read_pids(tmp_path / "pids")
    assert len(pids) == 2
    assert await all_dead(pids)


def children() -> set[int]:
    found: set[int] = set()
    for path in Path("/proc/self/task").glob("*/children"):
        found.update(int(p) for p in path.read_text().split())
    return found


def wait_for_file_blocking(path: Path, *, within: float = 30.0) -> None:
    """Block the event loop until `path` holds a line: nothing else in this loop runs meanwhile."""
    deadline = time.monotonic() + within
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
async def test_bash_task_cancel_kills_the_whole_process_group(ctx, tmp_path):
    # The cancel lands at the first moment the command exists, while the tool still awaits its
    # spawn: the loop is held until the command has started its background child.
    before = children()
    task = asyncio.get_running_loop().create_task(
        bash(ctx, "sleep 100 & echo $! $$ > pids; sleep 100")
    )
    deadline = time.monotonic() + 30
    while not children() - before:
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0)
    wait_for_file_blocking(tmp_path / "pids")
    pids = await read_pids(tmp_path / "pids")
    task.cancel()
    try:
        assert await all_dead(pids, within=1.0)
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_bash_kills_processes_left_behind_when_it_exits(ctx, tmp_path):
    with anyio.fail_after(30):
        result = await bash(ctx, "sleep 100 & echo $! > child; echo done")
    assert result == {"exitCode": 0, "output": "done\n", "truncated": False}
    assert await all_dead(await read_pids(tmp_path / "child"))


def test_bash_timeout_must_be_positive():
    with pytest.raises(ValueError):
        Bash.Input(command="ls", timeout=0)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "rm -fr build",
        "rm -r -f build",
        "sudo rm -Rf /",
        "rm --recursive --force x",
        "cd a && rm -rf b",
        "rm build -rf",
    ],
)
def test_bash_always_asks_for_recursive_forced_delete(command, tmp_path):
    reason = command_guard(command, tmp_path)
    assert reason == "the command deletes files recursively without confirmation (rm -rf)"


@pytest.mark.parametrize("command", ["cat .env", "cp .env.example .env", "source ./.env.local"])
def test_bash_always_asks_for_env_files(command, tmp_path):
    reason = command_guard(command, tmp_path)
    assert reason == "the command touches a .env file, which may contain secrets"


@pytest.mark.parametrize(
    "command",
    [
        "rm file.txt",
        "npm run rm-cache -f",
        "firm -rf",
        "node -e 'console.log(process.env.HOME)'",
        ".venv/bin/python -V",
    ],
)
def test_bash_does_not_ask_for_ordinary_commands(command, tmp_path):
    assert command_guard(command, tmp_path) is None


def test_bash_metadata_and_titles():
    tool = Bash()
    assert (tool.name, tool.kind, tool.risk, tool.read_only) == ("bash", "execute", "high", False)
    assert tool.title(Bash.Input(command="ls -la")) == "Run `ls -la`"
    assert tool.title(Bash.Input(command="make\nmake test")) == "Run `make`"
    assert tool.title(Bash.Input(command="x" * 80)) == "Run `" + "x" * 59 + "…`"
    background = Bash.Input(command="npm run dev", run_in_background=True)
    assert tool.title(background) == "Run `npm run dev` in background"
    assert tool.paths(Bash.Input(command="ls", cwd="src")) == ["src"]
    assert tool.paths(Bash.Input(command="ls")) == []


# background jobs


async def poll(ctx: ToolContext, jobs: BackgroundJobs, job_id: str, until: str) -> list[dict]:
    """Call bash_output until the accumulated output contains `until` or the job ends."""
    tool = BashOutput(jobs)
    seen: list[dict] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen.append(await tool.run(ctx, tool.Input(jobId=job_id)))
        if until in "".join(s["output"] for s in seen) or seen[-1]["status"] != "running":
            return seen
        await anyio.sleep(0.02)
    raise AssertionError(f"{until!r} never appeared: {seen}")


async def test_background_job_output_and_exit(ctx, jobs):
    started = await Bash(jobs).run(
        ctx, Bash.Input(command="echo start; echo done", run_in_background=True)
    )
    assert started == {"jobId": "bash_1", "pid": started["pid"]}
    seen = await poll(ctx, jobs, "bash_1", until="<not printed>")
    assert "".join(s["output"] for s in seen) == "start\ndone\n"
    final = {key: value for key, value in seen[-1].items() if key != "output"}
    assert final == {"jobId": "bash_1", "status": "exited", "exitCode": 0, "truncated": False}
    again = await BashOutput(jobs).run(ctx, BashOutput.Input(jobId="bash_1"))
    assert again["output"] == ""


async def test_background_output_is_only_what_is_new(ctx, jobs, tmp_path):
    command = "echo one; while [ ! -f go ]; do sleep 0.02; done; echo two; sleep 100"
    await Bash(jobs).run(ctx, Bash.Input(command=command, run_in_background=True))
    first = await poll(ctx, jobs, "bash_1", "one")
    assert "".join(s["output"] for s in first) == "one\n"
    assert first[-1]["status"] == "running"
    (tmp_path / "go").write_text("")
    second = await poll(ctx, jobs, "bash_1", "two")
    assert "".join(s["output"] for s in second) == "two\n"


async def test_kill_bash_kills_the_job_group(ctx, jobs, tmp_path):
    command = "sleep 100 & echo $! $$ > pids; sleep 100"
    started = await Bash(jobs).run(ctx, Bash.Input(command=command, run_in_background=True))
    pids = await read_pids(tmp_path / "pids")
    result = await KillBash(jobs).run(ctx, KillBash.Input(jobId=started["jobId"]))
    assert result == {"jobId": "bash_1", "status": "killed", "exitCode": -9}
    assert await all_dead([started["pid"], *pids])


async def test_jobs_are_private_to_their_session(ctx, jobs, tmp_path):
    await Bash(jobs).run(ctx, Bash.Input(command="sleep 100", run_in_background=True))
    other = ToolContext(cwd=tmp_path, session_id="s2")
    with pytest.raises(ToolError, match="No background job 'bash_1'; known jobs: none"):
        await BashOutput(jobs).run(other, BashOutput.Input(jobId="bash_1"))
    with pytest.raises(ToolError, match="No background job 'bash_9'; known jobs: bash_1"):
        await KillBash(jobs).run(ctx, KillBash.Input(jobId="bash_9"))


async def test_close_kills_every_job_and_removes_logs(ctx, tmp_path):
    registry = BackgroundJobs()
    command = "sleep 100 & echo $! > child; sleep 100"
    job = await Bash(registry).run(ctx, Bash.Input(command=command, run_in_background=True))
    child = await read_pids(tmp_path / "child")
    log_dir = registry._dir
    registry.close()
    assert await all_dead([job["pid"], *child])
    assert log_dir is not None and not log_dir.exists()


async def test_close_session_kills_only_that_session(ctx, jobs, tmp_path):
    other = ToolContext(cwd=tmp_path, session_id="s2")
    mine = await Bash(jobs).run(ctx, Bash.Input(command="sleep 100", run_in_background=True))
    theirs = await Bash(jobs).run(other, Bash.Input(command="sleep 100", run_in_background=True))
    jobs.close_session("s1")
    assert await all_dead([mine["pid"]])
    assert alive(theirs["pid"])
    status = await BashOutput(jobs).run(other, BashOutput.Input(jobId=theirs["jobId"]))
    assert status["status"] == "running"


def test_job_tools_metadata(jobs):
    output, kill = BashOutput(jobs), KillBash(jobs)
    assert (output.name, output.read_only, output.title(output.Input(jobId="bash_1"))) == (
        "bash_output",
        True,
        "Output of bash_1",
    )
    assert (kill.name, kill.read_only, kill.title(kill.Input(jobId="bash_1"))) == (
        "kill_bash",
        False,
        "Stop bash_1",
    )

"""The git tool: a fixed set of subcommands run as `git <args>` in the workspace, without a shell.

Whether a call is read-only, how risky it is and whether it must always ask are decided per call
from its arguments, so permission policy can let `git status` run freely while `git commit` asks.
Arguments are checked when the input is validated: a subcommand outside the list or a blocked
option never reaches permission or git.

Repository configuration can name programs for git to run (fsmonitor, filters, textconv, gpg,
a pager); read-only calls run without approval, so every such key is overridden for them
(`git_env.safe_env`) and options that would run gpg are refused. Calls the user approves (add,
commit, branch changes) run with the repository's config: a commit's hooks still run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import PurePath
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream
from pydantic import Field, field_validator

from server.aio import run_to_end

from .base import RESULT_CAP, Risk, Tool, ToolContext, ToolError, ToolInput
from .git_env import safe_env
from .spawn import kill_group, marked, started

ALLOWED = ("status", "diff", "log", "show", "branch", "add", "commit")
READ_ONLY = ("status", "diff", "log", "show")
DIFF_LIKE = ("diff", "log", "show")
# Write files outside git's control, or run programs named by repository configuration.
BLOCKED = ("--output", "--no-index", "--ext-diff", "--textconv", "--show-signature")
SAFE_CONFIG = ["-c", "core.fsmonitor=false", "-c", "color.ui=false", "-c", "core.quotepath=false"]
ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
}
TIMEOUT_S = 60.0
STDERR_CAP = 10_000
DRAIN_GRACE_S = 1.0

BRANCH_LIST_LETTERS = set("arlviq")
BRANCH_LIST_LONG = {
    "--all",
    "--remotes",
    "--list",
    "--verbose",
    "--show-current",
    "--ignore-case",
    "--color",
    "--no-color",
    "--column",
    "--no-column",
    "--abbrev",
    "--no-abbrev",
    "--omit-empty",
    "--quiet",
}
BRANCH_LIST_VALUED = {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
BRANCH_LIST_VALUED |= {"--sort", "--format"}
BRANCH_FORCE_LETTERS = set("DMCf")


class GitInput(ToolInput):
    args: list[str] = Field(
        min_length=1,
        description="Arguments after `git`, starting with the subcommand, e.g. "
        '["status", "--short"], ["diff", "--", "src/app.py"], ["commit", "-m", "Fix parsing"].',
    )

    @field_validator("args")
    @classmethod
    def _allowed(cls, args: list[str]) -> list[str]:
        sub = args[0]
        if sub not in ALLOWED:
            raise ValueError(
                f"git {sub} is not allowed; the first argument must be one of "
                f"{', '.join(ALLOWED)} (no global options such as -c or -C: git runs in the "
                "workspace); use bash for anything else"
            )
        for arg in _options(args[1:]):
            if _blocked(arg.split("=", 1)[0]):
                raise ValueError(f"option {arg} is not allowed with the git tool")
        for arg in _split(args[1:])[0]:
            if "%G" in arg:
                raise ValueError(
                    f"{arg}: signature placeholders (%G…) run gpg and are not allowed"
                )
        return args

    @property
    def command(self) -> str:
        """The command line after `git`; permission rules remember git calls by subcommand."""
        return " ".join(self.args)


def _split(args: list[str]) -> tuple[list[str], list[str]]:
    """(arguments before `--`, pathspecs after it)."""
    if "--" in args:
        i = args.index("--")
        return args[:i], args[i + 1 :]
    return args, []


def _options(args: list[str]) -> list[str]:
    return [a for a in _split(args)[0] if a.startswith("-") and a != "-"]


def _blocked(name: str) -> bool:
    # git accepts unambiguous abbreviations of long options (`--ext-d`), so prefixes count too;
    # `--text` is an option of its own.
    if len(name) < 4 or name == "--text":
        return False
    return any(option.startswith(name) for option in BLOCKED)


def _escapes(arg: str) -> bool:
    return os.path.isabs(arg) or arg.startswith("~") or ".." in PurePath(arg).parts


def _short_letters(arg: str) -> set[str]:
    return set(arg[1:]) if arg.startswith("-") and not arg.startswith("--") else set()


def _branch_lists(args: list[str]) -> bool:
    """True when `git branch <args>` only lists branches."""
    before, after = _split(args)
    listing = False
    expect_value = False
    for arg in before:
        if expect_value:
            expect_value = False
        elif arg in BRANCH_LIST_VALUED:
            expect_value = True
        elif arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if name not in BRANCH_LIST_LONG | BRANCH_LIST_VALUED:
                return False
            listing = listing or name == "--list"
        elif arg.startswith("-"):
            if not _short_letters(arg) <= BRANCH_LIST_LETTERS:
                return False
            listing = listing or "l" in arg
        elif not listing:
            return False  # a positional name creates a branch
    return listing or not after


def _branch_destructive(args: list[str]) -> bool:
    for arg in _options(args):
        name = arg.split("=", 1)[0]
        # `--forc` is git's abbreviation of `--force`; `--fo` is ambiguous and fails anyway.
        if len(name) >= 4 and "--force".startswith(name):
            return True
        if _short_letters(arg) & BRANCH_FORCE_LETTERS:
            return True
    return False


class Git(Tool):
    """Runs allowed git subcommands; the permission metadata depends on each call's arguments."""

    name = "git"
    description = (
        "Run git in the workspace: `args` is the argument list after `git`, starting with one "
        "of status, diff, log, show, branch, add, commit (no shell, so no quoting or pipes). "
        "status, diff, log, show and listing branches run freely; add, commit and creating or "
        "deleting branches need the user's approval. Returns {exitCode, output, truncated} "
        "(plus stderr when git wrote any); output is cut at 50,000 characters, so narrow big "
        "requests with `-n 20`, `--stat`, `--name-only` or paths after `--`. A non-zero exit is "
        "an error carrying git's message. Killed after 60 s. Editors are disabled: always pass "
        "the commit message with -m."
    )
    Input = GitInput
    kind = "execute"
    risk = "high"

    def __init__(self, *, timeout: float = TIMEOUT_S) -> None:
        self.timeout = timeout

    def title(self, args: GitInput) -> str:
        line = "git " + args.command
        return line if len(line) <= 60 else line[:59] + "…"

    def is_read_only(self, args: GitInput) -> bool:
        sub = args.args[0]
        return sub in READ_ONLY or (sub == "branch" and _branch_lists(args.args[1:]))

    def call_risk(self, args: GitInput) -> Risk:
        if self.is_read_only(args):
            return "low"
        return "high" if self.always_ask(args) else "medium"

    def always_ask(self, args: GitInput) -> str | None:
        sub, rest = args.args[0], args.args[1:]
        if sub == "commit":
            return "git commit records a new commit in the repository history"
        if sub == "branch" and _branch_destructive(rest):
            return "the git branch call forces a delete, rename or reset of a branch"
        return None

    def paths(self, args: GitInput) -> list[str]:
        sub = args.args[0]
        before, after = _split(args.args[1:])
        positional = [a for a in before if not a.startswith("-")]
        if sub == "add":
            return positional + after
        return after + [a for a in positional if _escapes(a)]

    async def run(self, ctx: ToolContext, args: GitInput) -> dict[str, Any]:
        sub, rest = args.args[0], args.args[1:]
        extra = ["--no-ext-diff", "--no-textconv"] if sub in DIFF_LIKE else []
        argv = [_git_path(), "--no-pager", *SAFE_CONFIG, sub, *extra, *rest]
        held, fd = None, None
        if self.is_read_only(args):
            env = await anyio.to_thread.run_sync(safe_env, ctx.cwd, ctx.env)
        else:
            env = {**os.environ, **(ctx.env or {}), **ENV}
            sandbox = ctx.sandbox
            if sandbox is not None and sandbox.settings.required and not sandbox.active:
                raise ToolError(f"git writes need a sandbox here: {sandbox.missing}")
            if sandbox is not None and sandbox.active:
                fd = sandbox.open_filter()
                argv = sandbox.wrap(argv, cwd=ctx.cwd, git_writable=True, filter_fd=fd)
                env = sandbox.environment(env)
                held = sandbox
        try:
            code, out, err, truncated = await run_git(
                argv, ctx=ctx, env=env, timeout=self.timeout, pass_fds=() if fd is None else (fd,)
            )
        except TimeoutError:
            raise ToolError(
                f"git {sub} timed out after {self.timeout:g} s and was killed; narrow the request "
                "(paths after --, -n N)"
            ) from None
        finally:
            if held is not None:
                held.release()
            if fd is not None:
                os.close(fd)
        if truncated:
            return _result(None, out, err, truncated=True)
        if code != 0:
            detail = (err or out).strip() or "(no output)"
            raise ToolError(f"git {sub} failed with exit code {code}: {detail}")
        return _result(code, out, err, truncated=False)


def _result(code: int | None, out: str, err: str, *, truncated: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"exitCode": code, "output": out, "truncated": truncated}
    if err.strip():
        result["stderr"] = err
    if truncated:
        result["note"] = (
            f"output cut at {RESULT_CAP} characters and git stopped; narrow the request "
            "(-n N, --stat, --name-only, paths after --)"
        )
    return result


def _git_path() -> str:
    found = shutil.which("git")
    if not found:
        raise ToolError("git is not installed or not on PATH")
    return found


class _Capped:
    """The first `cap` bytes of a stream, noting whether more arrived."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.over = False

    def feed(self, chunk: bytes) -> bool:
        room = self.cap - len(self.data)
        self.data.extend(chunk[:room])
        self.over = self.over or len(chunk) > room
        return not self.over

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def _pump(stream: ByteReceiveStream | None, into: _Capped, done: anyio.Event) -> None:
    try:
        if stream is not None:
            async for chunk in stream:
                if not into.feed(chunk):
                    return
    finally:
        done.set()


def _group_options() -> dict[str, Any]:
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


async def run_git(
    argv: list[str],
    *,
    ctx: ToolContext,
    env: dict[str, str],
    timeout: float,
    pass_fds: tuple[int, ...] = (),
) -> tuple[int, str, str, bool]:
    """Run git to completion: (exit code, stdout, stderr, stdout truncated).

    Once stdout passes the result cap git is killed: the rest would be cut anyway. A timeout
    (`TimeoutError`) or the caller's cancellation kills git and anything it started (hooks).
    """
    spawn = anyio.open_process(
        argv,
        cwd=ctx.cwd,
        env=marked(env),
        stdin=subprocess.DEVNULL,
        pass_fds=pass_fds,
        **_group_options(),
    )
    proc = await started(spawn, close=_reap)
    out, err = _Capped(RESULT_CAP), _Capped(STDERR_CAP)
    try:
        with anyio.move_on_after(timeout) as deadline:
            await _collect(proc, out, err)
    finally:
        kill_group(proc.pid, running=proc.returncode is None)
        await run_to_end(_reap(proc))
    if deadline.cancelled_caught:
        raise TimeoutError
    return proc.returncode or 0, out.text(), err.text(), out.over


async def _reap(proc: Any) -> None:
    with anyio.move_on_after(5):
        await proc.aclose()


async def _collect(proc: Any, out: _Capped, err: _Capped) -> None:
    out_done, err_done = anyio.Event(), anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_pump, proc.stderr, err, err_done)
        tg.start_soon(_pump, proc.stdout, out, out_done)
        await out_done.wait()
        if out.over:
            kill_group(proc.pid, running=True)
        await proc.wait()
        # Children a hook left running would hold the pipes open; they die with git.
        kill_group(proc.pid, running=False)
        with anyio.move_on_after(DRAIN_GRACE_S):
            await err_done.wait()
        tg.cancel_scope.cancel()

import os
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from server.permissions import rule_key
from server.tools.base import ToolContext, ToolError
from server.tools.git import Git

pytestmark = pytest.mark.skipif(os.name == "nt", reason="hooks below are POSIX shell")

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def sh_git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    sh_git(root, "init", "-q", "-b", "main")
    return root


@pytest.fixture
def ctx(repo: Path) -> ToolContext:
    return ToolContext(cwd=repo, env=GIT_ENV)


def committed(repo: Path, files: dict[str, str], message: str = "first") -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh_git(repo, "add", "-A")
    sh_git(repo, "commit", "-q", "-m", message)
    return sh_git(repo, "rev-parse", "--short", "HEAD").strip()


async def git(ctx: ToolContext, *args: str, tool: Git | None = None) -> dict:
    tool = tool or Git()
    return await tool.run(ctx, tool.Input(args=list(args)))


def ok(output: str, **extra) -> dict:
    return {"exitCode": 0, "output": output, "truncated": False, **extra}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def dies(pidfile: Path, within: float = 30.0) -> bool:
    """The pid in `pidfile` dies (a pidfile never written: the hook never ran, nothing to kill)."""
    deadline = time.monotonic() + within
    while pidfile.exists() and (not pidfile.read_text() or alive(int(pidfile.read_text()))):
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.05)
    return True


def hook(repo: Path, name: str, body: str) -> None:
    path = repo / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


# running


async def test_status_add_commit_log_diff_show(ctx, repo):
    (repo / "a.txt").write_text("one\n")
    assert await git(ctx, "status", "--short") == ok("?? a.txt\n")
    assert await git(ctx, "add", "a.txt") == ok("")
    result = await git(ctx, "commit", "-m", "first")
    head = sh_git(repo, "rev-parse", "--short", "HEAD").strip()
    assert result == ok(
        f"[main (root-commit) {head}] first\n 1 file changed, 1 insertion(+)\n"
        " create mode 100644 a.txt\n"
    )
    assert await git(ctx, "log", "--oneline") == ok(f"{head} first\n")
    (repo / "a.txt").write_text("two\n")
    diff = await git(ctx, "diff", "--stat")
    assert diff == ok(" a.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n")
    show = await git(ctx, "show", "--format=%s %an", "--name-only", "HEAD")
    assert show == ok("first T\n\na.txt\n")


async def test_branch_listing_and_creating(ctx, repo):
    head = committed(repo, {"a.txt": "a\n"})
    assert await git(ctx, "branch", "feature") == ok("")
    assert await git(ctx, "branch", "--list", "feat*") == ok("  feature\n")
    assert await git(ctx, "branch", "-v") == ok(f"  feature {head} first\n* main    {head} first\n")
    assert await git(ctx, "branch", "-d", "feature") == ok(
        f"Deleted branch feature (was {head}).\n"
    )


async def test_unicode_paths_are_shown_unquoted(ctx, repo):
    (repo / "données é.txt").write_text("x\n")
    assert await git(ctx, "status", "--short") == ok('?? "données é.txt"\n')


async def test_hook_stderr_is_returned_alongside_output(ctx, repo):
    committed(repo, {"a.txt": "a\n"})
    hook(repo, "pre-commit", "echo checked >&2")
    (repo / "a.txt").write_text("b\n")
    result = await git(ctx, "commit", "-qam", "second")
    assert result == ok("", stderr="checked\n")


async def test_failure_is_an_error_with_gits_message(ctx, repo):
    with pytest.raises(ToolError) as err:
        await git(ctx, "show", "HEAD")
    assert str(err.value) == (
        "git show failed with exit code 128: fatal: ambiguous argument 'HEAD': unknown revision "
        "or path not in the working tree.\nUse '--' to separate paths from revisions, like this:"
        "\n'git <command> [<revision>...] -- [<file>...]'"
    )


async def test_outside_a_repository_is_an_error(tmp_path):
    ctx = ToolContext(cwd=tmp_path, env={**GIT_ENV, "GIT_CEILING_DIRECTORIES": str(tmp_path)})
    with pytest.raises(ToolError, match=r"^git status failed with exit code 128: fatal: not a git"):
        await git(ctx, "status")


async def test_commit_without_message_fails_instead_of_opening_an_editor(ctx, repo):
    committed(repo, {"a.txt": "a\n"})
    (repo / "a.txt").write_text("b\n")
    with anyio.fail_after(60), pytest.raises(ToolError, match="Aborting commit due to empty"):
        await git(ctx, "commit", "-a")


async def test_repository_config_cannot_make_read_only_calls_run_programs(ctx, repo):
    committed(repo, {"a.txt": "a\n", ".gitattributes": "*.txt diff=conv\n"})
    marker = repo.parent / "ran"
    sh_git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    sh_git(repo, "config", "diff.external", f"sh -c 'touch {marker}'")
    sh_git(repo, "config", "diff.conv.textconv", f"sh -c 'touch {marker}; cat'")
    (repo / "a.txt").write_text("b\n")
    assert await git(ctx, "status", "--short") == ok(" M a.txt\n")
    diff = await git(ctx, "diff", "--stat")
    assert diff == ok(" a.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n")
    await git(ctx, "log", "-p", "-1")
    await git(ctx, "show", "HEAD")
    assert not marker.exists()


async def test_big_output_is_cut_and_git_stopped(ctx, repo):
    committed(repo, {"big.txt": "".join(f"line {i}\n" for i in range(40_000))})
    result = await git(ctx, "show", "HEAD")
    assert result == {
        "exitCode": None,
        "output": result["output"],
        "truncated": True,
        "note": "output cut at 50000 characters and git stopped; narrow the request "
        "(-n N, --stat, --name-only, paths after --)",
    }
    assert len(result["output"]) == 50_000
    assert result["output"].startswith("commit ")


async def test_timeout_kills_git_and_its_hooks(ctx, repo):
    committed(repo, {"a.txt": "a\n"})
    pidfile = repo.parent / "hook.pid"
    hook(repo, "pre-commit", f"sleep 30 & echo $! > {pidfile}; wait")
    (repo / "a.txt").write_text("b\n")
    with anyio.fail_after(25), pytest.raises(ToolError) as err:
        await git(ctx, "commit", "-am", "slow", tool=Git(timeout=1.5))
    assert str(err.value) == (
        "git commit timed out after 1.5 s and was killed; narrow the request (paths after --, -n N)"
    )
    assert await dies(pidfile)


async def test_cancel_kills_git_and_its_hooks(ctx, repo):
    committed(repo, {"a.txt": "a\n"})
    pidfile = repo.parent / "hook.pid"
    hook(repo, "pre-commit", f"sleep 30 & echo $! > {pidfile}; wait")
    (repo / "a.txt").write_text("b\n")
    async def cancel_once_the_hook_runs(scope: anyio.CancelScope) -> None:
        while not (pidfile.exists() and pidfile.read_text().strip()):
            await anyio.sleep(0.02)
        scope.cancel()

    with anyio.fail_after(25):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once_the_hook_runs, tg.cancel_scope)
            await git(ctx, "commit", "-am", "slow")
    assert await dies(pidfile)


# what is allowed


@pytest.mark.parametrize(
    ("args", "first"),
    [
        (["push"], "push"),
        (["checkout", "--", "a.txt"], "checkout"),
        (["reset", "--hard"], "reset"),
        (["config", "user.name", "x"], "config"),
        (["-c", "core.pager=sh", "log"], "-c"),
        (["-C", "/", "status"], "-C"),
        (["--exec-path=/tmp", "status"], "--exec-path=/tmp"),
        (["--git-dir=/tmp/x", "status"], "--git-dir=/tmp/x"),
    ],
)
def test_other_subcommands_and_global_options_are_refused(args, first):
    with pytest.raises(ValidationError) as err:
        Git.Input(args=args)
    assert err.value.errors()[0]["msg"] == (
        f"Value error, git {first} is not allowed; the first argument must be one of status, "
        "diff, log, show, branch, add, commit (no global options such as -c or -C: git runs in "
        "the workspace); use bash for anything else"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["diff", "--output=/tmp/x"],
        ["log", "-p", "--output", "/tmp/x"],
        ["diff", "--no-index", "/etc/passwd", "a"],
        ["diff", "--ext-diff"],
        ["show", "--ext-d"],
        ["diff", "--textconv"],
        ["log", "-p", "--textc"],
        ["show", "--show-signature"],
        ["log", "--show-sig"],
    ],
)
def test_options_that_write_files_or_run_programs_are_refused(args):
    with pytest.raises(ValidationError, match=r"option --[a-z-]+(=/tmp/x)? is not allowed"):
        Git.Input(args=args)


@pytest.mark.parametrize(
    "args", [["log", "--format=%G?"], ["log", "--pretty", "format:%h %GS"], ["show", "-s", "%GK"]]
)
def test_signature_placeholders_are_refused(args):
    with pytest.raises(ValidationError, match="signature placeholders"):
        Git.Input(args=args)


@pytest.mark.parametrize(
    "args",
    [
        ["diff", "--text"],
        ["diff", "--output-indicator-new=+"],
        ["diff", "--", "--output"],
    ],
)
def test_lookalike_options_and_pathspecs_are_accepted(args):
    assert Git.Input(args=args).args == args


def test_empty_args_are_refused():
    with pytest.raises(ValidationError, match="at least 1 item"):
        Git.Input(args=[])


# permission metadata per call


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["diff", "HEAD~1"],
        ["log", "-n", "5"],
        ["show", "HEAD"],
        ["branch"],
        ["branch", "-a"],
        ["branch", "-vv"],
        ["branch", "-avr"],
        ["branch", "--list", "feat*"],
        ["branch", "-l", "x"],
        ["branch", "--contains", "HEAD"],
        ["branch", "--merged", "main", "--no-color"],
        ["branch", "--sort=-committerdate", "--format=%(refname)"],
        ["branch", "--show-current"],
        ["branch", "--list", "--", "feat*"],
    ],
)
def test_read_only_calls(args):
    tool = Git()
    parsed = tool.Input(args=args)
    assert (tool.is_read_only(parsed), tool.always_ask(parsed), tool.call_risk(parsed)) == (
        True,
        None,
        "low",
    )


@pytest.mark.parametrize(
    "args",
    [
        ["add", "."],
        ["branch", "feature"],
        ["branch", "-d", "feature"],
        ["branch", "--delete", "feature"],
        ["branch", "-m", "old", "new"],
        ["branch", "-u", "origin/main"],
        ["branch", "--edit-description"],
        ["branch", "-v", "feature"],
        ["branch", "--contains", "HEAD", "new"],
        ["branch", "--", "new"],
    ],
)
def test_writes_that_ask_by_mode(args):
    tool = Git()
    parsed = tool.Input(args=args)
    assert (tool.is_read_only(parsed), tool.always_ask(parsed), tool.call_risk(parsed)) == (
        False,
        None,
        "medium",
    )


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["commit", "-m", "x"], "git commit records a new commit in the repository history"),
        (
            ["commit", "--amend", "--no-edit"],
            "git commit records a new commit in the repository history",
        ),
    ]
    + [
        (args, "the git branch call forces a delete, rename or reset of a branch")
        for args in (
            ["branch", "-D", "x"],
            ["branch", "-df", "x"],
            ["branch", "--delete", "--force", "x"],
            ["branch", "-d", "--forc", "x"],
            ["branch", "-M", "a", "b"],
            ["branch", "-C", "a", "b"],
            ["branch", "-f", "main", "HEAD~1"],
        )
    ],
)
def test_commits_and_destructive_branch_calls_always_ask(args, reason):
    tool = Git()
    parsed = tool.Input(args=args)
    assert (tool.is_read_only(parsed), tool.always_ask(parsed), tool.call_risk(parsed)) == (
        False,
        reason,
        "high",
    )


@pytest.mark.parametrize(
    ("args", "paths"),
    [
        (["add", "src/a.py", "-u", "--", "b.py"], ["src/a.py", "b.py"]),
        (["diff", "--", "src/a.py"], ["src/a.py"]),
        (["diff", "HEAD~1", "main..feature"], []),
        (["diff", "/etc/passwd", "../x", "~/y"], ["/etc/passwd", "../x", "~/y"]),
        (["log", "-n", "3", "../other"], ["../other"]),
        (["status"], []),
    ],
)
def test_paths_name_what_permission_must_confine(args, paths):
    tool = Git()
    assert tool.paths(tool.Input(args=args)) == paths


def test_git_metadata_title_and_rule_key():
    tool = Git()
    args = tool.Input(args=["add", "-A"])
    assert (tool.name, tool.kind, tool.risk, tool.read_only) == ("git", "execute", "high", False)
    assert tool.title(args) == "git add -A"
    long = tool.Input(args=["commit", "-m", "x" * 80])
    assert tool.title(long) == "git commit -m " + "x" * 45 + "…"
    assert rule_key(tool, args) == "git(add)"
    assert rule_key(tool, tool.Input(args=["branch", "x"])) == "git(branch)"
    assert tool.spec()["parameters"]["required"] == ["args"]

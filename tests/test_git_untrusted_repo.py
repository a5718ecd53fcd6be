"""A cloned repository's .git/config names programs (fsmonitor, a clean filter, textconv, gpg):
agentls's own status line and the git tool's read-only calls never run them. Real process,
stream-json door, scripted model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.test_streamjson_pipe import frames, run, stream, user

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the canary is a POSIX shell script")

CLEAN = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
SIGNATURE = (
    "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n"
)


def sh_git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", "-c", "core.fsmonitor=false", *args],
        cwd=repo,
        env={**os.environ, **CLEAN},
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture
def hostile_repo(workspace: Path) -> Path:
    """A signed-looking commit, then a config whose every program is the canary."""
    marker = workspace.parent / "canary-ran"
    canary = workspace.parent / "canary.sh"
    canary.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    canary.chmod(0o755)
    sh_git(workspace, "init", "-q", "-b", "main")
    (workspace / "a.txt").write_text("hello\n")
    (workspace / ".gitattributes").write_text("* filter=canary diff=canary\n")
    sh_git(workspace, "add", "-A")
    sh_git(workspace, "commit", "-q", "-m", "one")
    commit = sh_git(workspace, "cat-file", "commit", "HEAD")
    head, _, message = commit.partition("\n\n")
    signed = sh_git(
        workspace,
        "hash-object",
        "-t",
        "commit",
        "-w",
        "--stdin",
        stdin=f"{head}\n{SIGNATURE}\n{message}",
    ).strip()
    sh_git(workspace, "update-ref", "HEAD", signed)
    with (workspace / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {canary}\n\tpager = {canary}\n"
            f'[filter "canary"]\n\tclean = {canary}\n\tsmudge = {canary}\n'
            f'[diff "canary"]\n\ttextconv = {canary}\n[diff]\n\texternal = {canary}\n'
            f"[gpg]\n\tprogram = {canary}\n[log]\n\tshowSignature = true\n"
        )
    (workspace / "a.txt").write_text("changed\n")
    return marker


READ_ONLY_CALLS = [
    ["status"],
    ["status", "--short"],
    ["status", "-v"],
    ["diff"],
    ["diff", "HEAD"],
    ["log", "-p", "-1"],
    ["log", "--format=%G? %GS"],
    ["log", "--format", "%G?"],
    ["show"],
    ["show", "--show-signature"],
    ["branch", "--list", "-v"],
]


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_a_text_only_turn_runs_no_repository_program(tmp_path, workspace, hostile_repo, mode):
    proc = run(tmp_path, workspace, [user("hi")], *stream("--permission-mode", mode))
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert frames(proc)[-1]["result"] == "You said: hi"
    assert not hostile_repo.exists(), hostile_repo.read_text()


@pytest.mark.parametrize("args", READ_ONLY_CALLS, ids=[" ".join(a) for a in READ_ONLY_CALLS])
def test_read_only_git_calls_run_no_repository_program(tmp_path, workspace, hostile_repo, args):
    script = [
        {"toolCalls": [{"name": "git", "arguments": {"args": args}}]},
        {"text": "done"},
    ]
    proc = run(tmp_path, workspace, [user("look")], *stream(), script=script)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    results = [
        block
        for f in frames(proc)
        if f["type"] == "user"
        for block in f["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 1, json.dumps(frames(proc))[-3000:]
    refused = any("%G" in a or a == "--show-signature" for a in args)
    assert bool(results[0].get("is_error")) == refused, results[0]
    assert not hostile_repo.exists(), hostile_repo.read_text()

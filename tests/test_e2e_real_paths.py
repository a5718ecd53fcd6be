"""Path rules judged on what is really opened, through `agentls serve` over real stdio: a
symlink to `.git` or `.env`, a hard link to a file outside, `grep` and `glob` over a folder
holding `.env` (issue 19, item 5)."""

from __future__ import annotations

import os

import pytest

from server.testing.fake_llm import FakeToolCall
from tests.trust_fixture import clone, serve_turn

posix_only = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
SECRET = "TOKEN=hunter2"


def tool_results(fake_llm) -> list[str]:
    return [m["content"] for r in fake_llm.requests for m in r.body["messages"] if m["role"] == "tool"]


@pytest.fixture
def repo(workspace, fake_llm):
    clone(workspace, fake_llm)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / ".env").write_text(SECRET + "\n")
    return workspace


@posix_only
@pytest.mark.parametrize(
    "call",
    [
        FakeToolCall("write_file", {"path": "gitdir/config", "content": "[core]\nfsmonitor=x\n"}),
        FakeToolCall("edit_file", {"path": "gitdir/config", "old_string": "[core]",
                                   "new_string": "[core]\nfsmonitor=x"}),
        FakeToolCall("write_file", {"path": "settings.txt", "content": "TOKEN=mine\n"}),
    ],
    ids=["write-git", "edit-git", "write-env"],
)
async def test_accept_edits_asks_before_writing_through_a_symlink(
    tmp_path, repo, fake_llm, call
):
    (repo / "gitdir").symlink_to(".git")
    (repo / "settings.txt").symlink_to(".env")
    turn = await serve_turn(tmp_path, repo, fake_llm, [call], new={"mode": "acceptEdits"})
    assert len(turn.requests) == 1
    assert turn.statuses() == ["denied"]
    assert (repo / ".git" / "config").read_text() == "[core]\n"
    assert (repo / ".env").read_text() == SECRET + "\n"


@posix_only
async def test_reading_env_through_a_symlink_asks(tmp_path, repo, fake_llm):
    (repo / "notes.txt").symlink_to(".env")
    read = FakeToolCall("read_file", {"path": "notes.txt"})
    turn = await serve_turn(tmp_path, repo, fake_llm, [read])
    assert len(turn.requests) == 1
    assert not any("hunter2" in text for text in tool_results(fake_llm))


@pytest.mark.parametrize(
    "call",
    [
        FakeToolCall("grep", {"pattern": "TOKEN", "glob": ".env*"}),
        FakeToolCall("grep", {"pattern": "TOKEN", "path": "config"}),
        FakeToolCall("glob", {"pattern": "**/.env*"}),
    ],
    ids=["grep-glob", "grep-whitelisted", "glob"],
)
async def test_grep_and_glob_skip_env_files(tmp_path, repo, fake_llm, call):
    (repo / "config").mkdir()
    (repo / "config" / ".env.local").write_text(SECRET + "\n")
    # A repository's own ignore file may whitelist hidden files for ripgrep.
    (repo / "config" / ".ignore").write_text("!.env.local\n")
    (repo / "app.py").write_text("TOKEN = None\n")
    turn = await serve_turn(tmp_path, repo, fake_llm, [call])
    assert turn.requests == []
    [result] = tool_results(fake_llm)
    assert "hunter2" not in result and ".env" not in result


@posix_only
async def test_a_hard_link_to_an_outside_file_asks_before_a_write(tmp_path, repo, fake_llm):
    outside = tmp_path / "outside.txt"
    outside.write_text("original\n")
    os.link(outside, repo / "linked.txt")
    write = FakeToolCall("write_file", {"path": "linked.txt", "content": "changed\n"})
    turn = await serve_turn(tmp_path, repo, fake_llm, [write], new={"mode": "acceptEdits"})
    assert len(turn.requests) == 1
    assert "hard link" in turn.requests[0]["toolCall"]["reason"]
    assert outside.read_text() == "original\n"

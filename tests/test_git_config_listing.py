"""The config listing agentls's git calls take their overrides from: kept while no file the
config may come from changes, listed again when one does. Real git, real files; a wrapper on
PATH counts the listings."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from server.tools.git_config import ConfigListings, parse_listing, run_bounded
from server.tools.git_env import base_env, safe_env

pytestmark = pytest.mark.skipif(os.name == "nt", reason="listings are not kept on Windows")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """HOME in tmp_path, and a `git` on PATH that logs each call to tmp_path/git.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f'#!/bin/sh\necho "$*" >> {tmp_path / "git.log"}\nexec {shutil.which("git")} "$@"\n'
    )
    wrapper.chmod(0o755)
    (tmp_path / "home").mkdir()
    return base_env({"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path / "home")}) | {
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    return ws


def listings(tmp_path: Path) -> int:
    log = tmp_path / "git.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(line.startswith("config --list") for line in lines)


def add(path: Path, text: str) -> None:
    with path.open("a") as f:
        f.write(text)


def test_a_listing_is_kept_until_the_config_changes(tmp_path, env, repo):
    kept = ConfigListings(racy_ns=0)
    first = kept.keys(repo, env)
    assert "core.bare" in first
    assert kept.keys(repo, env) == first
    assert listings(tmp_path) == 1
    add(repo / ".git" / "config", '[filter "late"]\n\tclean = false\n')
    assert "filter.late.clean" in kept.keys(repo, env)
    assert listings(tmp_path) == 2


def test_a_subfolder_shares_the_repository_files(tmp_path, env, repo):
    (repo / "sub").mkdir()
    kept = ConfigListings(racy_ns=0)
    kept.keys(repo / "sub", env)
    add(repo / ".git" / "config", '[diff "late"]\n\ttextconv = false\n')
    assert "diff.late.textconv" in kept.keys(repo / "sub", env)


def test_an_include_that_appears_later_is_read(tmp_path, env, repo):
    add(repo / ".git" / "config", "[include]\n\tpath = later.conf\n")
    kept = ConfigListings(racy_ns=0)
    assert not any(k.startswith("filter.") for k in kept.keys(repo, env))
    (repo / ".git" / "later.conf").write_text('[filter "late"]\n\tprocess = false\n')
    assert "filter.late.process" in kept.keys(repo, env)


def test_an_onbranch_include_follows_the_branch(tmp_path, env, repo):
    (tmp_path / "other.conf").write_text('[gpg "late"]\n\tprogram = false\n')
    add(repo / ".git" / "config", '[includeIf "onbranch:other"]\n\tpath = ../../other.conf\n')
    kept = ConfigListings(racy_ns=0)
    assert "gpg.late.program" not in kept.keys(repo, env)
    git(repo, "checkout", "-q", "-b", "other")
    assert "gpg.late.program" in kept.keys(repo, env)


def test_a_user_config_made_later_is_read(tmp_path, env, repo):
    kept = ConfigListings(racy_ns=0)
    kept.keys(repo, env)
    add(tmp_path / "home" / ".gitconfig", '[filter "late"]\n\tsmudge = false\n')
    assert "filter.late.smudge" in kept.keys(repo, env)
    xdg = tmp_path / "home" / ".config" / "git"
    xdg.mkdir(parents=True)
    add(xdg / "config", '[diff "later"]\n\tcommand = false\n')
    assert "diff.later.command" in kept.keys(repo, env)


def test_a_nearer_repository_is_what_is_read(tmp_path, env, repo):
    inner = repo / "inner"
    inner.mkdir()
    kept = ConfigListings(racy_ns=0)
    kept.keys(inner, env)
    git(inner, "init", "-q")
    add(inner / ".git" / "config", '[filter "inner"]\n\tclean = false\n')
    assert "filter.inner.clean" in kept.keys(inner, env)


def test_a_rewrite_keeping_size_and_mtime_is_seen(tmp_path, env, repo):
    config = repo / ".git" / "config"
    add(config, '[filter "aaaa"]\n\tclean = false\n')
    before = os.stat(config)
    kept = ConfigListings(racy_ns=0)
    assert "filter.aaaa.clean" in kept.keys(repo, env)
    probe = tmp_path / "probe"
    while True:  # until the clock that stamps ctime has moved past the config's
        probe.write_text("x")
        if os.stat(probe).st_ctime_ns > before.st_ctime_ns:
            break
        time.sleep(0.01)
    config.write_text(config.read_text().replace("aaaa", "bbbb"))
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(config).st_size == before.st_size
    assert "filter.bbbb.clean" in kept.keys(repo, env)


def test_a_listing_of_files_changed_lately_is_not_kept(tmp_path, env, repo):
    kept = ConfigListings()  # the repository was made just now
    kept.keys(repo, env)
    kept.keys(repo, env)
    assert listings(tmp_path) == 2


def test_the_overrides_name_a_driver_added_between_calls(tmp_path, env, repo):
    safe_env(repo, env)
    add(repo / ".git" / "config", '[filter "late"]\n\tclean = false\n')
    listed = safe_env(repo, env)
    pairs = {
        listed[f"GIT_CONFIG_KEY_{i}"]: listed[f"GIT_CONFIG_VALUE_{i}"]
        for i in range(int(listed["GIT_CONFIG_COUNT"]))
    }
    assert pairs["filter.late.clean"] == ""


def test_parse_listing(tmp_path):
    raw = (
        b"file:/home/u/.gitconfig\0user.name\nA\nB\0"
        b"file:.git/config\0core.bare\nfalse\0"
        b"file:.git/config\0x.flag\0"
        b"file:.git/config\0include.path\nextra.conf\0"
        b"file:.git/config\0includeif.onbranch:x.path\n~/x.conf\0"
        b"command line:\0a.b\nc\0"
    )
    top, home = tmp_path / "ws", tmp_path / "home"
    got = parse_listing(raw, top=top, home=home)
    assert got.keys == [
        "user.name", "core.bare", "x.flag", "include.path", "includeif.onbranch:x.path", "a.b"
    ]  # fmt: skip
    assert got.includes == [top / ".git" / "extra.conf", home / "x.conf"]
    assert got.origins[0] == Path("/home/u/.gitconfig")
    assert got.exact
    other = parse_listing(b"file:.git/config\0include.path\n~bob/x.conf\0", top=top, home=home)
    assert not other.exact


def test_run_bounded(tmp_path):
    done = run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path,
                       env=dict(os.environ), timeout_s=60)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (3, b"out\n", b"err\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run_bounded(["sleep", "600"], cwd=tmp_path, env=dict(os.environ), timeout_s=0.2)

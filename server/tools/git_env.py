"""How agentls runs git on a repository it did not write: no program the repository names.

A repository's config (and what it includes) can name programs git runs on ordinary reads:
the fsmonitor hook on `status`, clean/smudge filters and textconv drivers on anything that
compares content, gpg on signed commits, a pager, ssh, credential helpers. For agentls's own
status line and the git tool's read-only calls, every such key is overridden at command-line
scope (which outranks every config file, included ones too): a fixed list, plus the per-driver
keys (`filter.<x>.*`, `diff.<x>.*`, `gpg.<x>.program`) found by listing the config, which runs
nothing. The overrides travel as GIT_CONFIG_COUNT/KEY/VALUE, so any driver name is passed
exactly, and reach the git processes git itself starts. The environment drops every GIT_*
variable from outside.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

FIXED = {
    "core.fsmonitor": "false",
    "core.hooksPath": os.devnull,
    "core.pager": "cat",
    "core.editor": ":",
    "sequence.editor": ":",
    "core.sshCommand": "false",
    "core.askPass": "",
    "core.gitProxy": "",
    "core.alternateRefsCommand": "",
    "credential.helper": "",
    "diff.external": "",
    "gpg.program": "false",
    "gpg.openpgp.program": "false",
    "gpg.x509.program": "false",
    "gpg.ssh.program": "false",
    "gpg.ssh.defaultKeyCommand": "",
    "log.showSignature": "false",
    "uploadpack.packObjectsHook": "",
    "protocol.allow": "never",
    "submodule.recurse": "false",
    "diff.ignoreSubmodules": "all",
    "status.submoduleSummary": "false",
    "color.ui": "false",
    "core.quotepath": "false",
}
# `diff.<x>.textconv` cannot be emptied (git would try to run ""): `cat` converts nothing.
DRIVER_KEYS = {
    re.compile(r"filter\..+\.(clean|smudge|process)", re.I | re.S): "",
    re.compile(r"filter\..+\.required", re.I | re.S): "false",
    re.compile(r"diff\..+\.textconv", re.I | re.S): "cat",
    re.compile(r"diff\..+\.command", re.I | re.S): "",
    re.compile(r"gpg\..+\.program", re.I | re.S): "false",
}
DROPPED = ("SSH_ASKPASS", "PAGER")
SET = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_OPTIONAL_LOCKS": "0",
}
LIST_TIMEOUT_S = 5


def base_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The process environment without GIT_* (and askpass/pager), then `extra`, then ours."""
    env = {
        k: v for k, v in os.environ.items() if not k.upper().startswith("GIT_") and k not in DROPPED
    }
    return {**env, **(extra or {}), **SET}


def config_keys(cwd: Path, env: dict[str, str]) -> list[str]:
    """Every key of the config git would read in `cwd` (includes followed). Runs nothing."""
    git = shutil.which("git")
    if git is None:
        return []
    try:
        argv = [git, "config", "--list", "--name-only", "-z"]
        listed = run_bounded(argv, cwd=cwd, env=env, timeout_s=LIST_TIMEOUT_S).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [k for k in listed.decode("utf-8", "replace").split("\0") if k]


def overrides(keys: list[str]) -> dict[str, str]:
    found = dict(FIXED)
    for key in keys:
        for pattern, value in DRIVER_KEYS.items():
            if pattern.fullmatch(key):
                found[key] = value
    return found


def safe_env(cwd: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a git call that must run no repository program."""
    env = base_env(extra)
    found = overrides(config_keys(cwd, env))
    env["GIT_CONFIG_COUNT"] = str(len(found))
    for i, (key, value) in enumerate(found.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def run_bounded(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float
) -> subprocess.CompletedProcess[bytes]:
    """Run `argv` to its end with its output captured; kill it after `timeout_s` and raise
    TimeoutExpired. subprocess.run's own timeout waits for the exit by polling in sleeps of
    0.5 ms and longer once the output has ended: ~1 ms more per git call on a turn's path."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        proc.kill()

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    timer.start()
    try:
        out, err = proc.communicate()
    finally:
        timer.cancel()
    if expired.is_set():
        raise subprocess.TimeoutExpired(argv, timeout_s, out, err)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)

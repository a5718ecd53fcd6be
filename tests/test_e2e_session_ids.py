"""Session ids from a client are names, never paths: `agentls -p --session-id` takes
`sess_<hex>` or a UUID and refuses anything else before a file is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_client import server_env

WRITE = [
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "hi"}}]},
    {"text": "done"},
]


def print_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = server_env(tmp_path, AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=json.dumps(WRITE))
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", "--permission-mode", "bypassPermissions",
         *args, "write it"],
        cwd=workspace, env=env, capture_output=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("bad", ["../../../planted", "../planted", "/tmp/planted", "a/b", "x\x01"])
def test_a_session_id_that_is_not_a_name_is_refused_before_anything_is_written(
    tmp_path: Path, bad: str
) -> None:
    run = print_run(tmp_path, "--session-id", bad)
    assert run.returncode != 0, run.stdout
    assert b"session id" in run.stderr + run.stdout
    assert not (tmp_path / "ws" / "x.txt").exists()
    outside = [p for p in tmp_path.rglob("*.jsonl") if (tmp_path / "data") not in p.parents]
    assert outside == []


@pytest.mark.parametrize("good", ["3f2b8c1e-9d4a-4e7b-8a6c-1f0e2d3c4b5a", "sess_0123456789abcdef"])
def test_a_uuid_or_sess_hex_is_taken(tmp_path: Path, good: str) -> None:
    run = print_run(tmp_path, "--session-id", good)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "data" / "checkpoints" / "sessions" / f"{good}.jsonl").exists()

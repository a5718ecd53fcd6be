"""`agentls sessions gc`: checkpoint contents no session can restore any more (a rewound turn's,
or every one of a session older than `--older-than` days) are removed, what a session can still
undo is kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import prompt, server_env, start


def objects(tmp_path: Path) -> set[str]:
    root = tmp_path / "data" / "checkpoints" / "objects"
    return {p.parent.name + p.name for p in root.glob("*/*")}


def gc(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "sessions", "gc", *args],
        capture_output=True,
        text=True,
        env=server_env(tmp_path),
        timeout=120,
    )


async def test_gc_removes_what_no_session_can_restore(tmp_path, workspace, fake_llm):
    replies = []
    for n, content in enumerate(("one\n", "two\n", "three\n")):
        call = FakeToolCall("write_file", {"path": "f.txt", "content": content}, id=f"w{n}")
        replies += [Reply(tool_calls=[call]), Reply(text="written")]
    fake_llm.script(*replies)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        new = {"cwd": str(workspace), "mode": "acceptEdits"}
        sid = (await client.call("session/new", new))["sessionId"]
        turns = [(await client.call("session/prompt", prompt(sid, "w")))["turnId"] for _ in "123"]
        await client.call("session/rewind", {"sessionId": sid, "turnId": turns[2]})
    finally:
        await client.close()
    assert (workspace / "f.txt").read_text() == "two\n"
    before = objects(tmp_path)
    assert len(before) == 3  # one, two, three

    kept = gc(tmp_path)
    assert kept.returncode == 0, kept.stderr
    assert len(objects(tmp_path)) == 2  # "three" was rewound: nothing can restore it
    assert "1 object" in kept.stdout

    gone = gc(tmp_path, "--older-than", "0")
    assert gone.returncode == 0, gone.stderr
    assert objects(tmp_path) == set()
    assert not list((tmp_path / "data" / "checkpoints" / "sessions").glob("*.jsonl"))

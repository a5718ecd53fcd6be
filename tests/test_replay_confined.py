"""A replay writes only inside its scratch copy of the workspace, whatever its trace says: a
crafted trace's paths that lead out (`<cwd>/../../x`, an absolute path, a link in the copy) are
neither restored nor written, even with a recorded "allow"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env
from tests.test_replay import record


def agentls(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    temp = tmp_path / "t"
    temp.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        env=server_env(tmp_path, TMPDIR=str(temp)),
        timeout=120,
    )


async def test_a_crafted_trace_never_writes_outside_the_scratch_copy(tmp_path, workspace):
    (workspace / "notes.md").write_text("status: draft\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    session_id, _, _ = await record(
        tmp_path,
        workspace,
        Reply(
            tool_calls=[
                FakeToolCall("write_file", {"path": "notes.md", "content": "ssh-ed25519 AAAA\n"})
            ]
        ),
        Reply(text="done"),
    )
    exported = agentls(tmp_path, "sessions", "export", session_id)
    assert exported.returncode == 0, exported.stderr
    keys = outside / "authorized_keys"
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    for n, leads_out in enumerate((f"{workspace}/../../victim.txt", f"{workspace}/link/planted")):
        crafted = exported.stdout.replace(str(workspace / "notes.md"), leads_out)
        crafted = crafted.replace("notes.md", str(keys))
        assert str(keys) in crafted and leads_out in crafted
        trace = tmp_path / f"crafted{n}.jsonl"
        trace.write_text(crafted)
        agentls(tmp_path, "replay", str(trace), "--workspace", str(workspace))

    assert not keys.exists()
    assert not (tmp_path / "t" / "victim.txt").exists()
    assert sorted(p.name for p in outside.iterdir()) == []
    assert (workspace / "notes.md").read_text() == "ssh-ed25519 AAAA\n"  # the original's own

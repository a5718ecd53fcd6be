"""A replayed command whose write the sandbox stopped, though the command exited 0 (it went on
after the failed write), is not counted as reproduced: `agentls replay --verify` (a real
subprocess, real bubblewrap) says the effect is blocked and names the call."""

from __future__ import annotations

import json

from tests.test_replay_sandbox import facts, needs_bwrap, replay
from tests.trust_fixture import bash, clone, serve_turn


@needs_bwrap
async def test_a_stopped_write_in_a_command_that_exits_0_is_blocked_not_reproduced(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm)
    outside = tmp_path / "outside.txt"
    outside.write_text("one\n")
    turn = await serve_turn(
        tmp_path,
        workspace,
        fake_llm,
        [bash(f"echo ran >> {outside}; echo finished", "call_out")],
        args=("--permission-mode", "bypassPermissions"),
    )
    assert turn.result["terminal"] == "completed", turn.result
    assert outside.read_text() == "one\nran\n"

    done = replay(tmp_path, turn.new["sessionId"], "--verify", "--json")
    assert outside.read_text() == "one\nran\n"
    assert done.returncode == 3, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "blocked" and report["verified"] is False
    assert facts(report)["effects_reproduced"] == "blocked"
    detail = next(f["detail"] for f in report["facts"] if f["name"] == "effects_reproduced")
    assert detail.startswith("call 1 bash") and "write" in detail, detail

"""A running command's output reaches the client while it runs, through `agentls serve` over
real stdio: `tool_call_update` in_progress updates carry what it printed so far."""

from __future__ import annotations

import json

from tests.trust_fixture import bash, clone, serve_turn

COMMAND = "echo first; sleep 1; echo second; sleep 1; echo third"


async def test_a_running_commands_output_streams_before_it_finishes(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(COMMAND)], new={"mode": "bypassPermissions"}
    )
    updates = [u for u in turn.updates("tool_call_update") if u["toolCallId"] == "call_sh"]
    live = [u["output"] for u in updates if u["status"] == "in_progress" and u.get("output")]
    final = json.loads(updates[-1]["output"])
    assert updates[-1]["status"] == "completed"
    assert final["output"] == "first\nsecond\nthird\n"
    assert live, "no output while the command ran"
    assert live[0].startswith("first\n") and "third" not in live[0]
    assert all(final["output"].startswith(text) for text in live), live
    assert live == sorted(live, key=len), "each live update has all the output so far"

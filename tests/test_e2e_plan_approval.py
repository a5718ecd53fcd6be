"""Leaving plan mode as a user meets it over JSON-RPC (real stdio, the loopback fake model):
the first todo_write of a plan-mode turn asks to approve the plan; approved, the session
switches mode (`mode_changed`) and the same turn carries the plan out; refused, nothing
changes and the model is told to keep planning."""

from __future__ import annotations

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import open_session, prompt, start
from tests.test_e2e_feature_gaps import offered, tool_results

PLAN = {
    "todos": [
        {"id": "1", "content": "Write a.txt", "status": "pending"},
        {"id": "2", "content": "Say done", "status": "pending"},
    ]
}


def script(fake_llm) -> None:
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("todo_write", PLAN, id="call_plan")]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "a\n"}, "w")]),
        Reply(text="done"),
    )


async def planned_turn(tmp_path, workspace, fake_llm, answer: str):
    script(fake_llm)
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    client.on_permission = lambda p: {"outcome": {"outcome": "selected", "optionId": answer}}
    try:
        await client.call("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
        result = await client.call("session/prompt", prompt(session_id, "add a.txt"))
    finally:
        await client.close()
    again = await start(tmp_path, workspace, fake_llm)  # the mode is stored with the turn
    try:
        await again.initialize()
        info = await again.call("session/load", {"sessionId": session_id})
    finally:
        await again.close()
    assert result["terminal"] == "completed", result
    kinds = [u["update"] for u in client.updates if u["update"]["kind"] == "mode_changed"]
    return client, info, kinds


@pytest.mark.parametrize(
    ("answer", "mode"), [("allow_always", "acceptEdits"), ("allow_once", "default")]
)
async def test_approving_the_plan_leaves_plan_mode_and_carries_it_out(
    tmp_path, workspace, fake_llm, answer, mode
):
    client, info, changed = await planned_turn(tmp_path, workspace, fake_llm, answer)
    asked = client.permission_requests[0]
    assert asked["toolCall"]["title"] == "Approve the plan and leave plan mode"
    assert [o["name"] for o in asked["options"]] == [
        "Yes, and accept edits",
        "Yes, ask before edits",
        "No, keep planning",
    ]
    assert changed == [{"kind": "mode_changed", "mode": mode, "reason": "plan approved"}]
    assert info["modes"]["currentModeId"] == mode
    assert (workspace / "a.txt").read_text() == "a\n"
    assert "write_file" not in offered(fake_llm, 0) and "write_file" in offered(fake_llm, 1)
    # acceptEdits writes unasked; default asks for the write (answered the same here)
    assert len(client.permission_requests) == (1 if mode == "acceptEdits" else 2)


async def test_refusing_the_plan_keeps_plan_mode(tmp_path, workspace, fake_llm):
    client, info, changed = await planned_turn(tmp_path, workspace, fake_llm, "reject_once")
    assert changed == [] and info["modes"]["currentModeId"] == "plan"
    assert not (workspace / "a.txt").exists()
    [refused] = tool_results(fake_llm, 1)
    assert "did not approve this plan" in refused
    assert len(client.permission_requests) == 1, "asked once per turn"
    assert "mode: plan" in str(fake_llm.requests[0].body["messages"])

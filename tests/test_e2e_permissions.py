"""Permission prompts end to end: the request reaches the client over real stdio, and its answer
decides what happens to the workspace and what the model is told."""

from __future__ import annotations

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import new_session, prompt, start


async def run_turn(tmp_path, workspace, fake_llm, replies, *, answer=None, caps=None, mode=None):
    fake_llm.script(*replies)
    client = await start(tmp_path, workspace, fake_llm)
    if answer:
        client.on_permission = lambda p: {"outcome": {"outcome": "selected", "optionId": answer}}
    try:
        await client.initialize(caps)
        session_id = await new_session(client, workspace, **({"mode": mode} if mode else {}))
        result = await client.call("session/prompt", prompt(session_id, "go"))
    finally:
        await client.close()
    return client, result


def tool_messages(fake_llm, index):
    return [m for m in fake_llm.requests[index].body["messages"] if m["role"] == "tool"]


def statuses(client):
    return [
        u["update"]["status"] for u in client.updates if u["update"]["kind"] == "tool_call_update"
    ]


async def test_reject_leaves_file_untouched_and_model_sees_denial(tmp_path, workspace, fake_llm):
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    edit = FakeToolCall(
        "edit_file",
        {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"},
        id="call_edit",
    )
    client, result = await run_turn(
        tmp_path,
        workspace,
        fake_llm,
        [Reply(tool_calls=[edit]), Reply(text="ok")],
        answer="reject_once",
    )
    assert result["terminal"] == "completed", result
    assert target.read_text() == "x = 1\n"
    [request] = client.permission_requests
    assert request["toolCall"] == {
        "toolCallId": "call_edit",
        "name": "edit_file",
        "title": request["toolCall"]["title"],
        "input": edit.arguments,
        "risk": "medium",
        "proposal": {"path": str(target), "oldText": "x = 1\n", "newText": "x = 2\n"},
    }
    assert [o["kind"] for o in request["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert statuses(client) == ["denied"]
    [denial] = tool_messages(fake_llm, 1)
    assert denial["tool_call_id"] == "call_edit"
    assert "denied" in denial["content"]


async def test_allow_once_applies_the_edit_with_a_diff(tmp_path, workspace, fake_llm):
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    edit = FakeToolCall(
        "edit_file",
        {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"},
        id="call_edit",
    )
    client, _ = await run_turn(
        tmp_path,
        workspace,
        fake_llm,
        [Reply(tool_calls=[edit]), Reply(text="done")],
        answer="allow_once",
    )
    assert target.read_text() == "x = 2\n"
    done = [
        u["update"]
        for u in client.updates
        if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] == "completed"
    ]
    assert done[0]["diff"] == {"path": str(target), "oldText": "x = 1\n", "newText": "x = 2\n"}


async def test_allow_always_stops_further_prompts_for_that_rule(tmp_path, workspace, fake_llm):
    calls = [FakeToolCall("bash", {"command": f"echo {w} > {w}.txt"}) for w in ("a", "b")]
    client, _ = await run_turn(
        tmp_path,
        workspace,
        fake_llm,
        [Reply(tool_calls=[calls[0]]), Reply(tool_calls=[calls[1]]), Reply(text="both written")],
        answer="allow_always",
    )
    assert len(client.permission_requests) == 1
    assert (workspace / "a.txt").read_text() == "a\n"
    assert (workspace / "b.txt").read_text() == "b\n"


async def test_plan_mode_refuses_writes_without_asking(tmp_path, workspace, fake_llm):
    write = FakeToolCall("write_file", {"path": "new.txt", "content": "hi"})
    client, _ = await run_turn(
        tmp_path, workspace, fake_llm, [Reply(tool_calls=[write]), Reply(text="ok")], mode="plan"
    )
    assert not (workspace / "new.txt").exists()
    assert client.permission_requests == []
    assert statuses(client) == ["denied"]
    assert "plan mode" in tool_messages(fake_llm, 1)[0]["content"]


async def test_client_without_permission_capability_gets_refusal(tmp_path, workspace, fake_llm):
    write = FakeToolCall("write_file", {"path": "new.txt", "content": "hi"})
    client, _ = await run_turn(
        tmp_path, workspace, fake_llm, [Reply(tool_calls=[write]), Reply(text="ok")], caps={}
    )
    assert not (workspace / "new.txt").exists()
    assert client.permission_requests == []
    assert "no one can answer" in tool_messages(fake_llm, 1)[0]["content"]


async def test_rm_rf_asks_even_when_bypassing(tmp_path, workspace, fake_llm):
    (workspace / "build").mkdir()
    rm = FakeToolCall("bash", {"command": "rm -rf build"})
    client, _ = await run_turn(
        tmp_path,
        workspace,
        fake_llm,
        [Reply(tool_calls=[rm]), Reply(text="ok")],
        answer="reject_once",
        mode="bypassPermissions",
    )
    assert (workspace / "build").is_dir()
    [request] = client.permission_requests
    assert request["toolCall"]["reason"]
    assert [o["kind"] for o in request["options"]] == ["allow_once", "reject_once"]

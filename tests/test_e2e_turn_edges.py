"""Edges of a turn over `agentls serve`: interaction answers that are JSON-RPC errors, seq
across reloads, usage of failed turns, the journal across retries."""

from __future__ import annotations

import asyncio
import json

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_e2e_interrupted import configure, prompt, start


def tool_messages(fake_llm, index):
    return [m for m in fake_llm.requests[index].body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("interaction", ["permission", "question"])
async def test_an_error_answer_counts_as_a_refusal_and_the_turn_goes_on(
    tmp_path, workspace, fake_llm, interaction
):
    call = (
        FakeToolCall("bash", {"command": "touch x"})
        if interaction == "permission"
        else FakeToolCall("ask_user_question", {"question": "Tabs?", "options": ["yes", "no"]})
    )
    fake_llm.script(Reply(tool_calls=[call]), Reply(text="carrying on"))
    configure(workspace, fake_llm, "openai")
    client = await start(tmp_path, "openai")

    def broken(params):
        raise RuntimeError("the dialog crashed")

    client.on_permission = client.on_question = broken
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        result = await client.call("session/prompt", prompt(sid))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    [answer] = tool_messages(fake_llm, 1)
    if interaction == "permission":
        assert answer["content"].startswith("The user denied this tool call.")
        assert not (workspace / "x").exists()
    else:
        assert "The user declined to answer." in answer["content"]


async def test_a_retried_first_call_keeps_the_prompt_in_the_journal(tmp_path, workspace, fake_llm):
    configure(workspace, fake_llm, "openai")
    config = json.loads((workspace / ".agentls" / "config.json").read_text())
    config["llm"]["maxRetries"] = 2
    (workspace / ".agentls" / "config.json").write_text(json.dumps(config))
    fake_llm.script(Reply(status=500, error_message="flaky"), Reply(text="the answer"))
    client = await start(tmp_path, "openai")
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        result = await client.call("session/prompt", prompt(sid, "the question"))
    finally:
        await client.close()
    assert result["terminal"] == "completed"
    second = await start(tmp_path, "openai")
    try:
        await second.call("session/load", {"sessionId": sid})
    finally:
        await second.close()
    replayed = [u["update"] for u in second.updates]
    assert replayed[0] == {"kind": "user_message_chunk", "text": "the question"}
    assert replayed[1] == {"kind": "agent_message_chunk", "text": "the answer"}


async def test_a_failed_turn_reports_the_usage_it_was_billed(tmp_path, workspace, fake_llm):
    configure(workspace, fake_llm, "openai", permissions={"mode": "bypassPermissions"})
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "true"})], usage=(120, 30)),
        Reply(status=500, error_message="upstream broke"),
    )
    client = await start(tmp_path, "openai")
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        result = await client.call("session/prompt", prompt(sid))
    finally:
        await client.close()
    billed = {"inputTokens": 120, "outputTokens": 30, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    assert (result["terminal"], result["usage"]) == ("failed", billed)
    assert client.updates[-1]["update"]["usage"] == billed


async def test_seq_survives_a_reload_in_a_new_process(tmp_path, workspace, fake_llm):
    configure(workspace, fake_llm, "openai", permissions={"mode": "bypassPermissions"})
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo hi"})]),
        Reply(text="first done"),
        Reply(text="second done"),
    )
    first = await start(tmp_path, "openai")
    try:
        sid = (await first.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        await first.call("session/prompt", prompt(sid, "one"))
    finally:
        await first.close()
    live = {(u["turnId"], json.dumps(u["update"], sort_keys=True)): u["seq"] for u in first.updates}
    second = await start(tmp_path, "openai")
    try:
        await second.call("session/load", {"sessionId": sid})
        replayed = list(second.updates)
        await second.call("session/prompt", prompt(sid, "two"))
    finally:
        await second.close()
    seqs = [u["seq"] for u in second.updates]
    assert seqs == sorted(set(seqs))  # increasing, replay and the new turn alike
    assert seqs[len(replayed)] > max(live.values())
    for u in replayed:  # what was sent live is replayed with the seq it had
        key = (u["turnId"], json.dumps(u["update"], sort_keys=True))
        if key in live:
            assert u["seq"] == live[key], u
    assert (
        sum((u["turnId"], json.dumps(u["update"], sort_keys=True)) in live for u in replayed) >= 3
    )


async def test_a_steer_the_turn_never_took_is_reported_back(tmp_path, workspace, fake_llm):
    configure(workspace, fake_llm, "openai", permissions={"mode": "bypassPermissions"})
    fake_llm.script(Reply(tool_calls=[FakeToolCall("bash", {"command": "sleep 30"})]))
    client = await start(tmp_path, "openai")
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        task = asyncio.create_task(client.call("session/prompt", prompt(sid)))
        await client.wait_for(lambda u: u["update"].get("status") == "in_progress", 60)
        queued = await client.call("session/steer", prompt(sid, "use tabs"))
        client.notify("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(task, 60)
        fake_llm.script(Reply(text="fresh"))
        again = await client.call("session/prompt", prompt(sid, "next"))
    finally:
        await client.close()
    assert queued == {"queued": True}
    assert (result["terminal"], result["unsentSteers"]) == ("aborted", ["use tabs"])
    assert client.updates[-1]["update"]["kind"] == "turn_end"
    ends = [u["update"] for u in client.updates if u["update"]["kind"] == "turn_end"]
    assert ends[0]["unsentSteers"] == ["use tabs"] and "unsentSteers" not in again
    sent = json.dumps(fake_llm.requests[-1].body["messages"])
    assert "use tabs" not in sent  # handed back to the client, not slipped into the next turn


TODOS = {"todos": [{"id": "1", "content": "Fix the bug", "status": "in_progress"}]}


async def test_kill_9_mid_tool_keeps_the_finished_steps_and_their_todos(
    tmp_path, workspace, fake_llm
):
    configure(workspace, fake_llm, "openai", permissions={"mode": "bypassPermissions"})
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("todo_write", TODOS, id="call_todo")]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "sleep 30"}, id="call_cut")]),
    )
    first = await start(tmp_path, "openai")
    try:
        sid = (await first.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        running = asyncio.ensure_future(first.call("session/prompt", prompt(sid)))
        await first.wait_for(
            lambda u: (
                u["update"].get("status") == "in_progress"
                and u["update"]["toolCallId"] == "call_cut"
            ),
            60,
        )
        await asyncio.sleep(0.3)  # the store commits continuously; let it catch up
        first._server.kill()
        await first._server.wait()
        running.cancel()
    finally:
        await first.close()
    again = {**TODOS, "expected_revision": 1}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("todo_write", again, id="call_again")]), Reply(text="done")
    )
    second = await start(tmp_path, "openai")
    try:
        await second.call("session/load", {"sessionId": sid})
        replayed = [u["update"] for u in second.updates]
        result = await second.call("session/prompt", prompt(sid, "carry on"))
    finally:
        await second.close()
    cut = [u for u in replayed if u.get("toolCallId") == "call_cut"]
    assert [(u["kind"], u.get("status")) for u in cut] == [
        ("tool_call", None),
        ("tool_call_update", "failed"),
    ]
    assert replayed[-1]["kind"] == "turn_end" and replayed[-1]["terminal"] == "aborted"
    assert result["terminal"] == "completed"
    done = [u["update"] for u in second.updates if u["update"].get("toolCallId") == "call_again"]
    assert done[-1]["status"] == "completed", done
    assert fake_llm.refusals == []

"""Interrupted turns over `agentls serve`: however a turn ends while a tool call is out (cancel,
deadline, a provider failure, kill -9), it has one terminal, every announced tool call is closed,
and the next prompt works against the strict fake model, live and after a reload in a new
process."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import FAKE_MODELS, AgentClient, server_env, use_fake_model

# Ollama refuses no history: with it the test checks the pairing itself
WIRES = list(FAKE_MODELS)
CLOSED = ("completed", "failed", "denied")
SLOW = {"command": "sleep 30"}


def configure(workspace, fake_llm, wire, *, permissions=None, **extra):
    """The permission mode goes to the user config: an untrusted project cannot set one."""
    user = {"permissions": permissions} if permissions else None
    use_fake_model(workspace, fake_llm, wire, user=user, **extra)


async def start(tmp_path, wire) -> AgentClient:
    client = AgentClient()
    await client.start(server_env(tmp_path, **{FAKE_MODELS[wire][1]: "test-key"}))
    await client.initialize()
    return client


def prompt(session_id, text="go"):
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def of_turn(updates, turn_id):
    return [u["update"] for u in updates if u["turnId"] == turn_id]


def assert_closed(updates):
    """One terminal, last; every announced tool call closed before it."""
    kinds = [u["kind"] for u in updates]
    assert kinds.count("turn_end") == 1 and kinds[-1] == "turn_end", kinds
    announced = [u["toolCallId"] for u in updates if u["kind"] == "tool_call"]
    closed = [
        u["toolCallId"]
        for u in updates
        if u["kind"] == "tool_call_update" and u["status"] in CLOSED
    ]
    assert sorted(set(closed)) == sorted(announced), updates
    return announced


async def hold(params):
    await asyncio.sleep(60)


async def warm_up(client, fake_llm, tmp_path, wire):
    """A turn in another workspace, without a deadline: the provider's SDK is loaded before
    the deadline's turn starts, so its deadline falls in the tool call."""
    other = tmp_path / "warm"
    other.mkdir()
    configure(other, fake_llm, wire)
    fake_llm.script(Reply(text="warm"))
    warm = (await client.call("session/new", {"cwd": str(other)}))["sessionId"]
    assert (await client.call("session/prompt", prompt(warm)))["terminal"] == "completed"


async def interrupt(client, fake_llm, session_id, scenario):
    """Run the scenario's first turn; returns its result (None for kill -9)."""
    task = asyncio.create_task(client.call("session/prompt", prompt(session_id)))
    if scenario in ("provider_500", "provider_cut", "deadline"):
        return await asyncio.wait_for(task, 60)
    if scenario == "cancel_permission":
        await client.wait_for(lambda u: u["update"]["kind"] == "permission", 60)
    elif scenario == "cancel_question":
        await client.wait_for(lambda u: u["update"]["kind"] == "question", 60)
    else:
        await client.wait_for(lambda u: u["update"].get("status") == "in_progress", 60)
    if scenario == "kill_9":
        await asyncio.sleep(0.3)  # the store commits continuously; let it catch up
        client._server.kill()
        await client._server.wait()
        task.cancel()
        return None
    client.notify("session/cancel", {"sessionId": session_id})
    return await asyncio.wait_for(task, 60)


FIRST = {
    "cancel_bash": [Reply(tool_calls=[FakeToolCall("bash", SLOW)])],
    "cancel_permission": [Reply(tool_calls=[FakeToolCall("bash", {"command": "touch x"})])],
    "cancel_question": [Reply(tool_calls=[FakeToolCall("ask_user_question", {"question": "?"})])],
    "deadline": [Reply(tool_calls=[FakeToolCall("bash", SLOW)])],
    "provider_500": [
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo hi"})]),
        Reply(status=500, error_message="upstream broke"),
    ],
    "kill_9": [Reply(tool_calls=[FakeToolCall("bash", SLOW)])],
    # the stream fails after the call was announced (Anthropic announces at its block's end)
    "provider_cut": [Reply(tool_calls=[FakeToolCall("bash", SLOW)], stream_error="overloaded")],
}
TERMINAL = {
    "cancel_bash": "aborted",
    "cancel_permission": "aborted",
    "cancel_question": "aborted",
    "deadline": "timed_out",
    "provider_500": "failed",
    "provider_cut": "failed",
}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("scenario", list(FIRST))
async def test_an_interrupted_turn_leaves_a_session_that_goes_on(
    tmp_path, workspace, fake_llm, wire, scenario
):
    mode = "default" if scenario == "cancel_permission" else "bypassPermissions"
    deadline = {"turnTimeout": 10} if scenario == "deadline" else {}
    configure(workspace, fake_llm, wire, permissions={"mode": mode}, **deadline)
    client = await start(tmp_path, wire)
    client.on_permission = client.on_question = hold
    try:
        if scenario == "deadline":
            await warm_up(client, fake_llm, tmp_path, wire)
        fake_llm.script(*FIRST[scenario])
        session_id = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        result = await interrupt(client, fake_llm, session_id, scenario)
        first_turn = client.updates[-1]["turnId"]
        if result is not None:
            assert result["terminal"] == TERMINAL[scenario], result
            announced = assert_closed(of_turn(client.updates, first_turn))
            # the OpenAI wire announces a call only once its reply has finished
            assert announced or (scenario, wire) == ("provider_cut", "openai")
            fake_llm.script(Reply(text="live and well"))
            again = await client.call("session/prompt", prompt(session_id, "again"))
            assert again["terminal"] == "completed", again
    finally:
        await client.close()

    configure(workspace, fake_llm, wire)
    fake_llm.script(Reply(text="after reload"))
    second = await start(tmp_path, wire)
    try:
        await second.call("session/load", {"sessionId": session_id})
        replayed = of_turn(second.updates, first_turn)
        after = await second.call("session/prompt", prompt(session_id, "after"))
    finally:
        await second.close()
    assert assert_closed(replayed) or (scenario, wire) == ("provider_cut", "openai")
    if scenario == "kill_9":
        assert replayed[-1]["terminal"] == "aborted"
    assert after["terminal"] == "completed", after
    assert fake_llm.refusals == []
    if wire == "ollama":
        last = fake_llm.requests[-1].body["messages"]
        # kill -9 and a cut stream leave the cut step out of the history
        assert any(m.get("tool_calls") for m in last) or scenario in ("provider_cut", "kill_9")
        for request in fake_llm.requests:
            assert_answered(request.body["messages"])


def assert_answered(messages):
    """Each assistant message's tool calls are answered by as many tool messages after it."""
    for index, message in enumerate(messages):
        calls = (message.get("tool_calls") or []) if message["role"] == "assistant" else []
        answers = messages[index + 1 : index + 1 + len(calls)]
        assert [m["role"] for m in answers] == ["tool"] * len(calls), messages


FIXTURE = Path(__file__).parent / "fixtures" / "dangling_tool_call.db"
"""Written by agentls before interrupted calls were answered: a turn cancelled while `bash`
ran, its call `call_cut` left without a result in the transcript and open in the journal."""


async def test_a_stored_session_with_a_dangling_call_is_mended_on_load(
    tmp_path, workspace, fake_llm
):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(FIXTURE, data / "sessions.db")
    with sqlite3.connect(data / "sessions.db") as conn:
        conn.execute("UPDATE sessions SET cwd = ?", (str(workspace),))
        [(session_id,)] = conn.execute("SELECT id FROM sessions").fetchall()
    configure(workspace, fake_llm, "openai")
    fake_llm.script(Reply(text="The codeword is PELICAN."), Reply(text="Still here."))
    for _ in range(2):  # the mended history is stored: a second process loads it as well
        client = await start(tmp_path, "openai")
        try:
            await client.call("session/load", {"sessionId": session_id})
            replayed = [u["update"] for u in client.updates]
            result = await client.call("session/prompt", prompt(session_id, "codeword?"))
        finally:
            await client.close()
        assert result["terminal"] == "completed", result
        closing = [u for u in replayed if u.get("toolCallId") == "call_cut"]
        assert [u["kind"] for u in closing] == ["tool_call", "tool_call_update"]
        assert closing[1]["status"] == "failed" and closing[1]["error"].startswith("Interrupted")
    assert fake_llm.refusals == []
    sent = fake_llm.requests[0].body["messages"]
    [answer] = [m for m in sent if m["role"] == "tool"]
    assert answer["tool_call_id"] == "call_cut" and answer["content"].startswith("Interrupted")
    assert len(fake_llm.requests) == 2

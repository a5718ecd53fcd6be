"""The spine end to end: a real pygls client drives `agentls serve` over real stdio, and the
model is the loopback fake speaking the OpenAI or Anthropic wire format."""

from __future__ import annotations

import asyncio

import pytest
from pygls.exceptions import JsonRpcException

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, kinds, new_session, prompt, server_env, start
from tests.conftest import write_project_config


def tool_result_sent(provider: str, body: dict) -> list:
    if provider == "openai":
        return [m for m in body["messages"] if m["role"] == "tool"]
    return [
        block
        for m in body["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_read_file_then_answer(tmp_path, workspace, fake_llm, provider):
    (workspace / "notes.txt").write_text("hello world\n")
    fake_llm.script(
        Reply(
            tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"}, id="call_read")],
            usage=(100, 20),
        ),
        Reply(text="The file says hello world.", usage=(150, 8)),
    )
    client = await start(tmp_path, workspace, fake_llm, provider)
    try:
        init = await client.initialize()
        agentls_caps = init.capabilities.experimental["agentls"]
        assert agentls_caps["protocolVersion"] == 1
        assert "native" in agentls_caps["engines"]
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "What is in notes.txt?"))
    finally:
        await client.close()

    usage = {"inputTokens": 250, "outputTokens": 28, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    assert result == {
        "turnId": result["turnId"],
        "terminal": "completed",
        "stopReason": "end_turn",
        "usage": usage,
    }
    updates = client.updates
    # seq 1 is the prompt: stored as the first entry of the turn, never sent live
    assert [u["seq"] for u in updates] == list(range(2, len(updates) + 2))
    assert {(u["sessionId"], u["turnId"]) for u in updates} == {(session_id, result["turnId"])}
    assert kinds(updates) == [
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "step_finish",
        "agent_message_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "step_finish",
        "turn_end",
    ]
    assert updates[0]["update"] == {
        "kind": "tool_call",
        "toolCallId": "call_read",
        "name": "read_file",
        "title": updates[0]["update"]["title"],
        "toolKind": "read",
        "input": {"path": "notes.txt"},
        "locations": [{"path": str(workspace / "notes.txt")}],
    }
    assert updates[1]["update"] == {
        "kind": "tool_call_update",
        "toolCallId": "call_read",
        "status": "in_progress",
    }
    done = updates[2]["update"]
    assert done["status"] == "completed" and "1: hello world" in done["output"]
    assert (
        "".join(
            u["update"]["text"] for u in updates if u["update"]["kind"] == "agent_message_chunk"
        )
        == "The file says hello world."
    )
    assert updates[-1]["update"] == {
        "kind": "turn_end",
        "terminal": "completed",
        "stopReason": "end_turn",
        "usage": usage,
    }

    assert len(fake_llm.requests) == 2
    sent = tool_result_sent(provider, fake_llm.requests[1].body)
    assert len(sent) == 1 and "1: hello world" in str(sent[0])


async def test_cancel_during_stream_aborts(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["word"] * 60), chunk_delay=0.2))
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        task = asyncio.create_task(client.call("session/prompt", prompt(session_id, "talk")))
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk")
        client.notify("session/cancel", {"sessionId": session_id})
        result = await asyncio.wait_for(task, 60)
        count = len(client.updates)
        await asyncio.sleep(0.6)
        assert len(client.updates) == count, "events arrived after the terminal"
    finally:
        await client.close()
    assert result["terminal"] == "aborted" and result["stopReason"] == "cancelled"
    assert client.updates[-1]["update"]["kind"] == "turn_end"
    assert client.updates[-1]["update"]["terminal"] == "aborted"


async def test_deadline_times_out(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["slow"] * 20), chunk_delay=0.3))
    client = await start(tmp_path, workspace, fake_llm, turnTimeout=0.8)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "talk"))
    finally:
        await client.close()
    assert result == {
        "turnId": result["turnId"],
        "terminal": "timed_out",
        "stopReason": "timeout",
        "usage": {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0},
        "error": "the turn exceeded its deadline of 0.8 s",
    }


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_provider_error_fails_turn_and_session_survives(
    tmp_path, workspace, fake_llm, provider
):
    fake_llm.script(Reply(status=500, error_message="the model fell over"), Reply(text="fine now"))
    client = await start(tmp_path, workspace, fake_llm, provider)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        failed = await client.call("session/prompt", prompt(session_id, "hi"))
        ok = await client.call("session/prompt", prompt(session_id, "again"))
    finally:
        await client.close()
    assert failed["terminal"] == "failed" and failed["stopReason"] == "error"
    assert "500" in failed["error"] and "the model fell over" in failed["error"]
    assert ok["terminal"] == "completed"
    last = [u for u in client.updates if u["turnId"] == ok["turnId"]]
    assert "".join(u["update"].get("text", "") for u in last) == "fine now"


async def test_second_prompt_during_turn_is_busy(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="one two three four", chunk_delay=0.3))
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        first = asyncio.create_task(client.call("session/prompt", prompt(session_id, "a")))
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk")
        with pytest.raises(JsonRpcException) as busy:
            await client.call("session/prompt", prompt(session_id, "b"))
        result = await first
    finally:
        await client.close()
    assert busy.value.code == -31002
    assert result["terminal"] == "completed", result


async def test_unknown_session_and_invalid_params(tmp_path, workspace, fake_llm):
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        with pytest.raises(JsonRpcException) as unknown:
            await client.call("session/prompt", prompt("sess_nope", "hi"))
        with pytest.raises(JsonRpcException) as bad:
            await client.call("session/prompt", {"sessionId": "x", "prompt": "not a list"})
        with pytest.raises(JsonRpcException) as missing:
            await client.call("session/new", {})
    finally:
        await client.close()
    assert unknown.value.code == -31001
    assert bad.value.code == -32602 and "prompt" in bad.value.message
    assert bad.value.data == [
        {"path": "prompt", "message": "Input should be a valid list", "type": "list_type"}
    ]
    assert missing.value.code == -32602 and "cwd" in missing.value.message


async def test_missing_key_is_a_clear_error(tmp_path, workspace):
    write_project_config(workspace, {"llm": {"provider": "anthropic"}})
    client = AgentClient()
    await client.start(server_env(tmp_path))
    try:
        await client.initialize()
        with pytest.raises(JsonRpcException) as err:
            await client.call("session/new", {"cwd": str(workspace)})
        with pytest.raises(JsonRpcException) as unknown:
            await client.call("session/new", {"cwd": str(workspace), "provider": "nonesuch"})
    finally:
        await client.close()
    assert err.value.code == -31004 and "ANTHROPIC_API_KEY" in err.value.message
    assert unknown.value.code == -31004 and "nonesuch" in unknown.value.message

"""The Python client end to end: `agentls serve` over real stdio, the loopback fake model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from protocol.client import (
    AgentMessageChunk,
    AskQuestionResult,
    Client,
    InvalidParams,
    MethodNotFound,
    PromptResult,
    ProviderUnavailable,
    SessionBusy,
    SessionNotFound,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    allow_once,
    reject,
)
from protocol.methods import PROTOCOL_VERSION
from protocol.updates import Location, Usage
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env


def model_env(tmp_path: Path, fake_llm) -> dict[str, str]:
    return server_env(
        tmp_path,
        AGENTLS_PROVIDER="openai",
        AGENTLS_MODEL="gpt-5.5",
        AGENTLS_BASE_URL=fake_llm.openai_base_url,
        AGENTLS_MAX_RETRIES="0",
        OPENAI_API_KEY="test-key",
    )


async def test_e2e_read_file_then_answer(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello world\n")
    read = FakeToolCall("read_file", {"path": "notes.txt"}, id="call_read")
    fake_llm.script(
        Reply(tool_calls=[read], usage=(100, 20)),
        Reply(text="The file says hello world.", usage=(150, 8)),
    )
    async with await Client.spawn(env=model_env(tmp_path, fake_llm)) as client:
        assert client.server_info["protocolVersion"] == PROTOCOL_VERSION
        assert client.supports("steer") and "native" in client.server_info["engines"]
        session = await client.new_session(workspace)
        turn = session.prompt("What is in notes.txt?")
        items = [item async for item in turn]

    usage = Usage(input_tokens=250, output_tokens=28)
    assert items[-1] == PromptResult(
        turn_id=turn.turn_id, terminal="completed", stop_reason="end_turn", usage=usage
    )
    assert [type(i).__name__ for i in items] == [
        "ToolCall",
        "ToolCallUpdate",
        "ToolCallUpdate",
        "StepFinish",
        *["AgentMessageChunk"] * 5,
        "StepFinish",
        "TurnEnd",
        "PromptResult",
    ]
    notes = str(workspace.resolve() / "notes.txt")
    assert items[0] == ToolCall(
        tool_call_id="call_read",
        name="read_file",
        title=items[0].title,
        tool_kind="read",
        input={"path": "notes.txt"},
        locations=[Location(path=notes)],
    )
    assert items[1] == ToolCallUpdate(tool_call_id="call_read", status="in_progress")
    assert items[-2] == TurnEnd(terminal="completed", stop_reason="end_turn", usage=usage)
    assert turn.text == "The file says hello world." and turn.last_seq == len(items)  # seq 1: the prompt


async def test_e2e_busy_then_cancel_then_the_session_goes_on(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["word"] * 60), chunk_delay=0.2), Reply(text="fine now"))
    async with await Client.spawn(env=model_env(tmp_path, fake_llm)) as client:
        session = await client.new_session(workspace)
        turn = session.prompt("talk")
        assert isinstance(await anext(turn), AgentMessageChunk)
        with pytest.raises(SessionBusy):
            await session.run("me too")
        await session.cancel()
        result = await asyncio.wait_for(turn.wait(), 60)
        again = await session.run("again")
    assert (result.terminal, result.stop_reason) == ("aborted", "cancelled")
    assert turn.updates[-1] == TurnEnd(terminal="aborted", stop_reason="cancelled", usage=Usage())
    assert again.result.terminal == "completed" and again.text == "fine now"


async def test_e2e_errors_are_typed(tmp_path, workspace, fake_llm):
    async with await Client.spawn(env=model_env(tmp_path, fake_llm)) as client:
        with pytest.raises(SessionNotFound):
            await client.call(
                "session/prompt",
                {"sessionId": "sess_nope", "prompt": [{"type": "text", "text": "hi"}]},
            )
        with pytest.raises(InvalidParams) as bad:
            await client.call("session/prompt", {"sessionId": "x", "prompt": "not a list"})
        with pytest.raises(InvalidParams):
            await client.new_session(tmp_path / "missing")
        with pytest.raises(ProviderUnavailable) as provider:
            await client.new_session(workspace, provider="nonesuch")
        with pytest.raises(MethodNotFound):
            await client.connection.request("session/nonesuch", {})
    assert bad.value.data == [
        {"path": "prompt", "message": "Input should be a valid list", "type": "list_type"}
    ]
    assert "nonesuch" in provider.value.message


async def test_e2e_questions_and_permissions_go_through_the_handlers(tmp_path, workspace, fake_llm):
    app = workspace / "app.py"
    app.write_text("x = 1\n")
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    fake_llm.script(
        Reply(
            tool_calls=[
                FakeToolCall(
                    "ask_user_question", {"question": "Which value?", "options": ["2", "3"]}
                )
            ]
        ),
        Reply(tool_calls=[FakeToolCall("edit_file", edit, id="call_edit")]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "rm app.py"}, id="call_rm")]),
        Reply(text="done"),
    )
    asked = []

    def only_edits(request):
        asked.append(request.tool_call.name)
        return allow_once(request) if request.tool_call.name == "edit_file" else reject(request)

    async with await Client.spawn(
        env=model_env(tmp_path, fake_llm), on_permission=only_edits
    ) as client:
        session = await client.new_session(
            workspace, on_question=lambda q: AskQuestionResult(answers={"Which value?": "2"})
        )
        turn = await session.run("set x")
    assert turn.result.terminal == "completed" and asked == ["edit_file", "bash"]
    assert app.read_text() == "x = 2\n"
    statuses = {u.tool_call_id: u.status for u in turn.updates if isinstance(u, ToolCallUpdate)}
    assert statuses["call_edit"] == "completed" and statuses["call_rm"] == "denied"
    answer = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert "Which value? → 2" in answer[0]

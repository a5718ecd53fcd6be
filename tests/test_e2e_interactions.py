"""Questions, plans and cancel end to end over real stdio."""

from __future__ import annotations

import asyncio
import os
import time

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import open_session

QUESTIONS = {
    "questions": [
        {
            "question": "Which runner?",
            "header": "Runner",
            "options": [{"label": "pytest", "description": "default"}, {"label": "unittest"}],
        },
        {
            "question": "Which folders?",
            "header": "Folders",
            "options": [{"label": "src"}, {"label": "tests"}, {"label": "docs"}],
            "multiSelect": True,
        },
    ]
}


def prompt(session_id, text="go"):
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def tool_content(fake_llm, index):
    return [m["content"] for m in fake_llm.requests[index].body["messages"] if m["role"] == "tool"]


async def test_multi_select_answers_reach_the_model(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("ask_user_question", QUESTIONS)]), Reply(text="thanks")
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    client.on_question = lambda p: {
        "answers": {"Which runner?": "pytest", "Which folders?": ["src", "tests"]}
    }
    try:
        result = await client.call("session/prompt", prompt(session_id))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    [request] = client.question_requests
    assert request["questions"] == [
        {
            "question": "Which runner?",
            "header": "Runner",
            "multiSelect": False,
            "options": [{"label": "pytest", "description": "default"}, {"label": "unittest"}],
        },
        {
            "question": "Which folders?",
            "header": "Folders",
            "multiSelect": True,
            "options": [{"label": "src"}, {"label": "tests"}, {"label": "docs"}],
        },
    ]
    [content] = tool_content(fake_llm, 1)
    assert "Which folders? → src, tests" in content and "Which runner? → pytest" in content


async def test_client_without_questions_gets_user_not_reachable(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("ask_user_question", {"question": "Tabs or spaces?"})]),
        Reply(text="spaces then"),
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm, caps={})
    try:
        await client.call("session/prompt", prompt(session_id))
    finally:
        await client.close()
    assert client.question_requests == []
    [content] = tool_content(fake_llm, 1)
    assert '"error": "user_not_reachable"' in content
    updates = [u["update"] for u in client.updates if u["update"]["kind"] == "tool_call_update"]
    assert updates[-1]["status"] == "completed"


async def test_question_timeout_gives_user_timeout(tmp_path, workspace, fake_llm):
    ask = {"question": "Proceed?", "options": ["yes", "no"], "timeoutMs": 1000}
    fake_llm.script(Reply(tool_calls=[FakeToolCall("ask_user_question", ask)]), Reply(text="ok"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)

    async def never(params):
        await asyncio.sleep(30)

    client.on_question = never
    try:
        result = await client.call("session/prompt", prompt(session_id))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    assert '"error": "user_timeout"' in tool_content(fake_llm, 1)[0]


async def test_cancel_while_question_pending_aborts(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(tool_calls=[FakeToolCall("ask_user_question", {"question": "?"})]))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    asked = asyncio.Event()
    withdrawn = asyncio.Event()

    async def wait_forever(params):
        asked.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:  # the server's $/cancelRequest closes the dialog
            withdrawn.set()
            raise

    client.on_question = wait_forever
    try:
        task = asyncio.create_task(client.call("session/prompt", prompt(session_id)))
        await asyncio.wait_for(asked.wait(), 60)
        client.notify("session/cancel", {"sessionId": session_id})
        result = await asyncio.wait_for(task, 60)
        await asyncio.wait_for(withdrawn.wait(), 60)
    finally:
        await client.close()
    assert result["terminal"] == "aborted"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is as good as gone
        return stat.read().split(") ")[1][0] != "Z"


async def test_cancel_kills_background_children(tmp_path, workspace, fake_llm):
    command = "sleep 100 & echo $$ $! > pids.txt; sleep 100"
    fake_llm.script(Reply(tool_calls=[FakeToolCall("bash", {"command": command})]))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    pids_file = workspace / "pids.txt"
    try:
        task = asyncio.create_task(client.call("session/prompt", prompt(session_id)))
        deadline = time.monotonic() + 60
        while not (pids_file.exists() and pids_file.read_text().endswith("\n")):
            assert time.monotonic() < deadline, "the command never started"
            await asyncio.sleep(0.05)
        pids = [int(p) for p in pids_file.read_text().split()]
        assert all(alive(p) for p in pids)
        client.notify("session/cancel", {"sessionId": session_id})
        result = await asyncio.wait_for(task, 60)
    finally:
        await client.close()
    assert result["terminal"] == "aborted"
    deadline = time.monotonic() + 30
    while [p for p in pids if alive(p)]:
        assert time.monotonic() < deadline, "a process of the cancelled command survived"
        await asyncio.sleep(0.05)


async def test_todo_write_streams_a_plan(tmp_path, workspace, fake_llm):
    todos = {
        "todos": [
            {"id": "1", "content": "Read the code", "status": "completed"},
            {"id": "2", "content": "Fix the bug", "status": "in_progress"},
        ]
    }
    bad = {
        "todos": [
            {"id": "1", "content": "a", "status": "in_progress"},
            {"id": "2", "content": "b", "status": "in_progress"},
        ]
    }
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("todo_write", todos)]),
        Reply(tool_calls=[FakeToolCall("todo_write", bad)]),
        Reply(text="ok"),
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        await client.call("session/prompt", prompt(session_id))
    finally:
        await client.close()
    plans = [u["update"] for u in client.updates if u["update"]["kind"] == "plan"]
    assert plans == [{"kind": "plan", "entries": todos["todos"]}]
    assert "only one todo may be in_progress" in tool_content(fake_llm, 2)[-1]

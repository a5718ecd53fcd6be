"""The TypeScript Claude Agent SDK's query() drives `agentls` as its Claude Code executable
(tests/clients/sdk_query.mjs), against the loopback fake model."""

from __future__ import annotations

from typing import Any

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env, use_fake_model
from tests.node_clients import AGENTLS, require_clients, run_script


@pytest.fixture(autouse=True)
def _clients():
    require_clients()


def run_query(tmp_path, workspace, fake_llm, **plan: Any) -> list[dict[str, Any]]:
    """Run one query() to its end; returns the script's events (the last one is `done`)."""
    use_fake_model(workspace, fake_llm)
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    plan = {"executable": AGENTLS, "cwd": str(workspace), "env": env, **plan}
    return run_script("sdk_query.mjs", plan, timeout=120)


def messages(events, kind=None):
    found = [e["message"] for e in events if e["event"] == "message"]
    return [m for m in found if kind is None or m["type"] == kind]


def tool_uses(events):
    return [
        (block["name"], block["input"])
        for m in messages(events, "assistant")
        for block in m["message"]["content"]
        if block["type"] == "tool_use"
    ]


def test_a_string_prompt_reads_a_file(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="It says hello."),
    )
    events = run_query(tmp_path, workspace, fake_llm, prompt="What is in notes.txt?")
    [result] = messages(events, "result")
    assert (result["subtype"], result["result"], result["num_turns"]) == (
        "success",
        "It says hello.",
        2,
    )
    assert list(result["modelUsage"]) == ["gpt-5.5"]
    assert result["modelUsage"]["gpt-5.5"]["inputTokens"] == result["usage"]["input_tokens"]
    [init] = [m for m in messages(events, "system") if m["subtype"] == "init"]
    assert init["cwd"] == str(workspace) and "Read" in init["tools"]


def test_max_turns_ends_the_turn_with_an_error_result(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
    )
    events = run_query(
        tmp_path, workspace, fake_llm, prompt="read forever", options={"maxTurns": 1}
    )
    [result] = messages(events, "result")
    assert (result["subtype"], result["is_error"], result["terminal_reason"]) == (
        "error_max_turns",
        True,
        "max_turns",
    )
    assert isinstance(result["errors"], list)


def test_interrupt_then_a_new_turn_in_the_same_query(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["slow"] * 50), chunk_delay=0.1), Reply(text="fresh"))
    events = run_query(
        tmp_path,
        workspace,
        fake_llm,
        turns=[{"prompt": "talk", "interruptOnDelta": True}, {"prompt": "again"}],
        options={"includePartialMessages": True},
    )
    [interrupt] = [e for e in events if e["event"] == "interrupt"]
    assert interrupt["response"] == {"still_queued": []}
    first, second = messages(events, "result")
    assert (first["subtype"], first["terminal_reason"], first["errors"]) == (
        "error_during_execution",
        "aborted_streaming",
        [],
    )
    assert (second["subtype"], second["result"]) == ("success", "fresh")
    assert first["session_id"] == second["session_id"]


ASK = {
    "questions": [
        {
            "question": "Which runner?",
            "header": "Runner",
            "options": [{"label": "pytest"}, {"label": "unittest"}],
        }
    ]
}


def test_can_use_tool_always_allow_and_ask_user_question(tmp_path, workspace, fake_llm):
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    again = {"path": "app.py", "old_string": "x = 2", "new_string": "x = 3"}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("edit_file", edit)]),
        Reply(tool_calls=[FakeToolCall("edit_file", again)]),
        Reply(tool_calls=[FakeToolCall("ask_user_question", ASK)]),
        Reply(text="pytest it is"),
    )
    permissions = {"Edit": "always", "AskUserQuestion": {"answers": {"Which runner?": "pytest"}}}
    events = run_query(
        tmp_path, workspace, fake_llm, turns=[{"prompt": "edit"}], permissions=permissions
    )
    asked = [e for e in events if e["event"] == "permission"]
    assert [a["toolName"] for a in asked] == ["Edit", "AskUserQuestion"]  # allowed always
    edit_ask, question = asked
    assert edit_ask["input"]["file_path"] == str(target)
    assert edit_ask["suggestions"] == [
        {
            "type": "addRules",
            "rules": [{"toolName": "Edit"}],
            "behavior": "allow",
            "destination": "session",
        }
    ]
    assert "decisionReason" not in edit_ask["given"] and "blockedPath" not in edit_ask["given"]
    ids = {name: block_id for name, block_id in tool_use_ids(events)}
    assert question["toolUseID"] == ids["AskUserQuestion"]
    assert target.read_text() == "x = 3\n"
    tool = [m["content"] for m in fake_llm.requests[3].body["messages"] if m["role"] == "tool"]
    assert "Which runner? → pytest" in tool[-1]
    assert messages(events, "result")[-1]["result"] == "pytest it is"


def tool_use_ids(events):
    return [
        (block["name"], block["id"])
        for m in messages(events, "assistant")
        for block in m["message"]["content"]
        if block["type"] == "tool_use"
    ]


def test_set_model_between_turns(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="first"), Reply(text="second"))
    turns = [{"prompt": "one"}, {"prompt": "two", "setModel": "gpt-5.4-mini"}]
    events = run_query(tmp_path, workspace, fake_llm, turns=turns)
    assert [r["result"] for r in messages(events, "result")] == ["first", "second"]
    assert [r.body["model"] for r in fake_llm.requests] == ["gpt-5.5", "gpt-5.4-mini"]
    assert list(messages(events, "result")[-1]["modelUsage"]) == ["gpt-5.5", "gpt-5.4-mini"]


def test_resume_continues_the_stored_session(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="noted"), Reply(text="you said remember 42"))
    first = run_query(tmp_path, workspace, fake_llm, prompt="remember 42")
    session_id = messages(first, "result")[0]["session_id"]
    second = run_query(
        tmp_path, workspace, fake_llm, prompt="what did I say?", options={"resume": session_id}
    )
    assert messages(second, "result")[0]["session_id"] == session_id
    sent = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "user"]
    assert any("remember 42" in str(c) for c in sent)

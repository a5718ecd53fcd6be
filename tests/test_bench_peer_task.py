"""The peer suite's scripted task reads the same conversation on the three wires it serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.peer_task import ANSWER, TASK, WARM, conversation, replies

WS = Path("/w")
ANTHROPIC = {
    "tools": [{"name": "Read"}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": TASK}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
    ],
}
CHAT = {
    "tools": [{"type": "function", "function": {"name": "read_file"}}],
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": TASK},
        {"role": "assistant", "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "alpha"},
    ],
}
RESPONSES = {
    "tools": [{"type": "function", "name": "exec_command"}],
    "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": TASK}]},
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "alpha"},
    ],
}


@pytest.mark.parametrize(
    "body", [ANTHROPIC, CHAT, RESPONSES], ids=["anthropic", "chat", "responses"]
)
def test_each_wire_reads_as_the_prompt_then_its_tool_result(body):
    assert conversation(body) == [("user", TASK), ("result", "")]
    assert replies(WS)(body).text == ANSWER


@pytest.mark.parametrize(
    ("body", "call"),
    [
        (ANTHROPIC, ("Read", {"file_path": "/w/notes.txt"})),
        (CHAT, ("read_file", {"path": "notes.txt"})),
        (RESPONSES, ("exec_command", {"cmd": "cat notes.txt"})),
    ],
    ids=["anthropic", "chat", "responses"],
)
def test_before_the_result_the_task_reads_the_file_with_the_agents_own_tool(body, call):
    asked = {**body, "messages": body.get("messages", [])[:2], "input": body.get("input", [])[:2]}
    [made] = replies(WS)(asked).tool_calls
    assert (made.name, made.arguments) == call


def test_a_warm_prompt_after_the_task_is_answered_at_once():
    later = [*CHAT["messages"], {"role": "assistant", "content": ANSWER}]
    body = {**CHAT, "messages": [*later, {"role": "user", "content": f"{WARM} 1"}]}
    reply = replies(WS)(body)
    assert (reply.text, reply.tool_calls) == ("Warm answer.", [])


def test_a_request_without_tools_is_a_side_request():
    assert replies(WS)({"messages": [{"role": "user", "content": "title?"}]}).text == "ok"

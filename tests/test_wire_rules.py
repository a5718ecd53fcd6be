"""The fake model refuses, like the real services, histories they refuse: status and text."""

from __future__ import annotations

import anthropic
import openai
import pytest

from server.testing.fake_llm import FakeModelServer, Reply


def openai_call(server: FakeModelServer, messages: list) -> None:
    with openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0) as client:
        list(client.chat.completions.create(model="m", messages=messages, stream=True))


def anthropic_call(server: FakeModelServer, messages: list) -> None:
    with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0) as client:
        list(client.messages.create(model="m", max_tokens=5, messages=messages, stream=True))


CALL = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def test_openai_refuses_a_tool_call_without_its_result(server: FakeModelServer) -> None:
    server.script(Reply(text="never sent"))
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "user", "content": "again"},
    ]
    with pytest.raises(openai.BadRequestError) as exc:
        openai_call(server, messages)
    assert exc.value.status_code == 400
    assert exc.value.body == {
        "message": "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not have response "
        "messages: call_1",
        "type": "invalid_request_error",
        "param": "messages.[2].role",
        "code": None,
    }
    assert server.pending == 1 and len(server.refusals) == 1


def test_openai_refuses_a_result_without_its_call(server: FakeModelServer) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "call_9", "content": "x"},
    ]
    with pytest.raises(openai.BadRequestError) as exc:
        openai_call(server, messages)
    assert exc.value.body["message"] == (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'."
    )
    assert exc.value.body["param"] == "messages.[1].role"


def test_openai_accepts_a_paired_history(server: FakeModelServer) -> None:
    server.script(Reply(text="ok"))
    openai_call(
        server,
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "done"},
            {"role": "user", "content": "next"},
        ],
    )
    assert server.refusals == []


def test_openai_refuses_a_tool_call_id_answered_twice(server: FakeModelServer) -> None:
    """A provider that numbers every call `0`, its ids sent back as they came."""
    zero = {**CALL, "id": "0"}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [zero]},
        {"role": "tool", "tool_call_id": "0", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [zero]},
        {"role": "tool", "tool_call_id": "0", "content": "b"},
    ]
    with pytest.raises(openai.BadRequestError) as exc:
        openai_call(server, messages)
    assert exc.value.body == {
        "message": "Invalid parameter: Duplicate value for 'tool_call_id' of '0', in "
        "messages[2] and messages[4].",
        "type": "invalid_request_error",
        "param": "messages.[4].tool_call_id",
        "code": None,
    }


USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [USE]},
                {"role": "user", "content": "again"},
            ],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block "
            "in the next message.",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "hm"},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_7", "content": "x"}],
                },
            ],
            "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_7. Each `tool_result` block must have a corresponding `tool_use` block in the "
            "previous message.",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": ""}]}],
            "messages.0.content.0.text: text content blocks must be non-empty",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}, USE]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}],
                },
            ],
            "messages.1.content.0: text content blocks must contain non-whitespace text",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [USE]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}],
                },
                {"role": "assistant", "content": [USE]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "y"}],
                },
            ],
            "messages.3.content.0: `tool_use` ids must be unique",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [{**USE, "id": "functions.bash:0"}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "functions.bash:0", "content": "x"}
                    ],
                },
            ],
            "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        ),
        (
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": []},
                {"role": "user", "content": "again"},
            ],
            "messages.1: all messages must have non-empty content except for the optional final "
            "assistant message",
        ),
    ],
)
def test_anthropic_refusals(server: FakeModelServer, messages: list, error: str) -> None:
    with pytest.raises(anthropic.BadRequestError) as exc:
        anthropic_call(server, messages)
    assert exc.value.status_code == 400
    assert exc.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": error},
    }


def test_strict_false_serves_anything() -> None:
    with FakeModelServer(strict=False) as server:
        server.script(Reply(text="ok"))
        anthropic_call(server, [{"role": "assistant", "content": [USE]}])
        assert server.refusals == []

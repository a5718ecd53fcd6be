"""The fake's OpenAI Responses API (`/v1/responses`), read through the official `openai` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pydantic
import pytest
from openai.types.responses import Response, ResponseStreamEvent

from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply

ASK = [{"role": "user", "content": "What is in notes.txt?"}]


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture
def client(server: FakeModelServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0) as made:
        yield made


def events(client: openai.OpenAI, **params: object) -> list:
    params = {"model": "gpt-test", "input": ASK, **params}
    return list(client.responses.create(stream=True, **params))  # type: ignore[call-overload]


def refusal(client: openai.OpenAI, **params: object) -> tuple[int, object]:
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="gpt-test", stream=True, **params)  # type: ignore[call-overload]
    return refused.value.status_code, refused.value.body


def test_a_streamed_answer_and_tool_call_in_the_order_the_api_sends_them(server, client):
    server.script(Reply(text="Let me look", tool_calls=[FakeToolCall("read", {"path": "a.py"})]))
    got = events(client)

    assert [e.type for e in got] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * 3,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * 3,
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in got] == list(range(len(got)))
    assert "".join(e.delta for e in got if e.type == "response.output_text.delta") == "Let me look"
    final = got[-1].response
    assert final.status == "completed" and final.id.startswith("resp_")
    message, call = final.output
    assert (message.type, message.role, message.content[0].text) == (
        "message",
        "assistant",
        "Let me look",
    )
    assert (call.type, call.call_id, call.name) == ("function_call", "call_1", "read")
    assert json.loads(call.arguments) == {"path": "a.py"}
    assert {e.item_id for e in got if e.type.startswith("response.function_call")} == {call.id}
    assert (final.usage.input_tokens, final.usage.output_tokens) == (10, 5)


def test_the_sdk_stream_helper_assembles_the_same_response(server, client):
    server.script(Reply(text="It says hello.", usage=(40, 6), cache_tokens=(30, 0)))
    with client.responses.stream(model="gpt-test", input=ASK) as stream:  # type: ignore[arg-type]
        texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()

    assert "".join(texts) == final.output_text == "It says hello."
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.input_tokens_details.cached_tokens) == (70, 30)


def test_a_non_streaming_call_returns_the_whole_response(server, client):
    server.script(Reply(text="plain answer", tool_calls=[FakeToolCall("ls", {}, id="call_z")]))
    response = client.responses.create(model="gpt-test", input="hi")

    assert response.output_text == "plain answer"
    assert response.output[1].type == "function_call"
    assert response.output[1].call_id == "call_z"
    assert server.requests[0].body["input"] == "hi"


def test_reasoning_summary_and_its_encrypted_content_when_asked(server, client):
    server.script(Reply(thinking="check the file", text="done"))
    got = events(client, include=["reasoning.encrypted_content"])

    summary = [e.delta for e in got if e.type == "response.reasoning_summary_text.delta"]
    assert summary == ["check ", "the ", "file"]
    reasoning = got[-1].response.output[0]
    assert reasoning.type == "reasoning"
    assert reasoning.summary[0].text == "check the file"
    assert reasoning.encrypted_content and reasoning.encrypted_content.startswith("sig_")
    assert got[-1].response.usage.output_tokens_details.reasoning_tokens == 3


def test_max_tokens_ends_incomplete_and_a_stream_error_fails_the_response(server, client):
    server.script(Reply(text="cut", stop_reason="max_tokens"), Reply(text="a", stream_error="boom"))
    short, failed = events(client)[-1], events(client)[-1]

    assert short.type == "response.incomplete"
    assert short.response.incomplete_details.reason == "max_output_tokens"
    assert failed.type == "response.failed"
    assert (failed.response.status, failed.response.error.message) == ("failed", "boom")


def test_an_output_for_a_call_that_was_never_made_is_refused(server, client):
    orphan = [*ASK, {"type": "function_call_output", "call_id": "call_9", "output": "x"}]
    assert refusal(client, input=orphan) == (
        400,
        {
            "message": "No tool call found for function call output with call_id call_9.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        },
    )
    assert server.refusals == ["No tool call found for function call output with call_id call_9."]


def test_a_call_without_its_output_is_refused(client):
    call = {"type": "function_call", "call_id": "call_4", "name": "ls", "arguments": "{}"}
    status, body = refusal(client, input=[*ASK, call])
    assert (status, body["message"], body["param"]) == (  # type: ignore[index]
        400,
        "No tool output found for function call call_4.",
        "input",
    )


def test_missing_input_and_an_unknown_previous_response_are_refused(client):
    assert refusal(client) == (
        400,
        {
            "message": "Missing required parameter: 'input'.",
            "type": "invalid_request_error",
            "param": "input",
            "code": "missing_required_parameter",
        },
    )
    status, body = refusal(client, input="hi", previous_response_id="resp_nope")
    assert (status, body["message"], body["code"]) == (  # type: ignore[index]
        400,
        "Previous response with id 'resp_nope' not found.",
        "previous_response_not_found",
    )


def test_a_stored_response_carries_its_call_into_the_next_request(server, client):
    server.script(Reply(tool_calls=[FakeToolCall("ls", {}, id="call_a")]), Reply(text="two files"))
    first = events(client)[-1].response
    answer = [{"type": "function_call_output", "call_id": "call_a", "output": "a b"}]
    second = events(client, input=answer, previous_response_id=first.id)

    assert second[-1].response.output_text == "two files"
    assert server.refusals == []


def test_an_unstored_response_cannot_be_continued(server, client):
    server.script(Reply(text="forgotten"))
    first = events(client, store=False)[-1].response
    status, body = refusal(client, input="and?", previous_response_id=first.id)

    assert (status, body["code"]) == (400, "previous_response_not_found")  # type: ignore[index]


def test_raw_stream_is_named_sse_without_a_done_line(server):
    server.script(Reply(text="a"))
    body = {"model": "m", "input": "hi", "stream": True}
    raw = httpx.post(server.openai_base_url + "/responses", json=body)
    blocks = raw.text.strip().split("\n\n")

    assert raw.headers["content-type"] == "text/event-stream"
    assert blocks[0].startswith("event: response.created\ndata: {")
    assert blocks[-1].startswith("event: response.completed\n")
    assert all("[DONE]" not in block for block in blocks)


def test_every_event_and_the_whole_response_validate_as_the_sdk_types(server):
    stream_event: pydantic.TypeAdapter = pydantic.TypeAdapter(ResponseStreamEvent)
    server.script(
        Reply(thinking="hmm", text="a b", tool_calls=[FakeToolCall("ls", {"a": 1})]),
        Reply(text="cut", stop_reason="max_tokens"),
        Reply(text="x", stream_error="boom"),
        Reply(text="whole", cache_tokens=(3, 2)),
    )
    body = {"model": "m", "input": "hi", "stream": True, "include": ["reasoning.encrypted_content"]}
    kinds = []
    for _ in range(3):
        raw = httpx.post(server.openai_base_url + "/responses", json=body).text
        for block in raw.strip().split("\n\n"):
            kinds.append(stream_event.validate_python(json.loads(block.split("data: ", 1)[1])).type)
    whole = httpx.post(server.openai_base_url + "/responses", json={"model": "m", "input": "hi"})
    usage = Response.model_validate(whole.json()).usage

    assert {"response.completed", "response.incomplete", "response.failed"} <= set(kinds)
    assert usage is not None
    assert usage.input_tokens_details.model_dump(exclude_none=True) == {
        "cached_tokens": 3,
        "cache_write_tokens": 2,
    }


def test_a_wrong_key_is_refused_as_openai_refuses_it():
    with (
        FakeModelServer(api_key="sk-right-key") as fake,
        openai.OpenAI(base_url=fake.openai_base_url, api_key="sk-wrong-key", max_retries=0) as bad,
        pytest.raises(openai.AuthenticationError) as refused,
    ):
        bad.responses.create(model="gpt-test", input="hi", stream=True)
    assert refused.value.body == {
        "message": "Incorrect API key provided: sk-*****-key. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "type": "authentication_error",
        "param": None,
        "code": "invalid_api_key",
    }

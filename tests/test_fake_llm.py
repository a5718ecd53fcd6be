"""The loopback fake model server, checked against the real SDKs and raw HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply

ROOT = Path(__file__).resolve().parent.parent
USER_HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


CLIENTS: list = []


@pytest.fixture(autouse=True)
def close_clients() -> Iterator[None]:
    yield
    while CLIENTS:
        CLIENTS.pop().close()


def openai_client(server: FakeModelServer) -> openai.OpenAI:
    client = openai.OpenAI(base_url=server.openai_base_url, api_key="sk-test", max_retries=0)
    CLIENTS.append(client)
    return client


def anthropic_client(server: FakeModelServer) -> anthropic.Anthropic:
    client = anthropic.Anthropic(
        base_url=server.anthropic_base_url, api_key="sk-ant", max_retries=0
    )
    CLIENTS.append(client)
    return client


def openai_chunks(server: FakeModelServer, **params: object) -> list:
    stream = openai_client(server).chat.completions.create(
        model="gpt-test", messages=USER_HI, stream=True, **params
    )
    return list(stream)


def test_binds_loopback_only(server: FakeModelServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.openai_base_url == server.base_url + "/v1"
    assert server.anthropic_base_url == server.base_url


def test_openai_wire_parses_with_sdk(server: FakeModelServer) -> None:
    server.script(
        Reply(text="Hello there, world", tool_calls=[FakeToolCall("read", {"path": "a.py"})])
    )
    chunks = openai_chunks(server, stream_options={"include_usage": True})

    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    texts = [d.content for d in deltas if d.content]
    assert texts == ["Hello ", "there, ", "world"]
    fragments = [t for d in deltas for t in d.tool_calls or []]
    assert len(fragments) >= 3
    assert (fragments[0].index, fragments[0].id, fragments[0].function.name) == (
        0,
        "call_1",
        "read",
    )
    args = "".join(f.function.arguments or "" for f in fragments)
    assert json.loads(args) == {"path": "a.py"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].choices == []
    assert chunks[-1].usage.model_dump(include={"prompt_tokens", "completion_tokens"}) == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
    }


def test_openai_usage_only_when_asked_and_reasoning_content(server: FakeModelServer) -> None:
    server.script(Reply(text="ok", thinking="let me think", stop_reason="max_tokens"))
    chunks = openai_chunks(server)

    assert all(c.usage is None for c in chunks)
    reasoning = [c.choices[0].delta.model_extra.get("reasoning_content") for c in chunks]
    assert [r for r in reasoning if r] == ["let ", "me ", "think"]
    assert chunks[-1].choices[0].finish_reason == "length"


def test_anthropic_wire_parses_with_sdk(server: FakeModelServer) -> None:
    server.script(
        Reply(
            text="Hi there",
            thinking="Plan first",
            tool_calls=[FakeToolCall("grep", {"pattern": "x", "n": 3}, id="toolu_x")],
            usage=(12, 7),
            cache_tokens=(4, 2),
        )
    )
    client = anthropic_client(server)
    with client.messages.stream(model="claude-test", max_tokens=100, messages=USER_HI) as stream:
        kinds = [event.type for event in stream]
        message = stream.get_final_message()

    assert kinds[0] == "message_start"
    assert kinds.count("content_block_start") == 3
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].thinking == "Plan first"
    assert message.content[0].signature.startswith("sig_")
    assert message.content[1].text == "Hi there"
    assert (message.content[2].id, message.content[2].input) == (
        "toolu_x",
        {"pattern": "x", "n": 3},
    )
    assert (message.stop_reason, message.model) == ("tool_use", "claude-test")
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (12, 7)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (4, 2)


def test_anthropic_raw_event_lines(server: FakeModelServer) -> None:
    server.script(Reply(text="a b"))
    body = {"model": "m", "max_tokens": 5, "messages": USER_HI, "stream": True}
    text = httpx.post(server.base_url + "/v1/messages", json=body).text
    events = [block.split("\n")[0] for block in text.strip().split("\n\n")]

    assert events == [
        "event: message_start",
        "event: ping",
        "event: content_block_start",
        "event: content_block_delta",
        "event: content_block_delta",
        "event: content_block_stop",
        "event: message_delta",
        "event: message_stop",
    ]


def test_openai_raw_ends_with_done(server: FakeModelServer) -> None:
    server.script(Reply(text="a"))
    body = {"model": "m", "messages": USER_HI, "stream": True}
    response = httpx.post(server.openai_base_url + "/chat/completions", json=body)

    assert response.headers["content-type"] == "text/event-stream"
    assert response.text.strip().split("\n\n")[-1] == "data: [DONE]"


def test_http_errors_use_each_provider_shape(server: FakeModelServer) -> None:
    server.script(
        Reply(status=429, error_message="slow down"), Reply(status=529, error_message="busy")
    )
    with pytest.raises(openai.RateLimitError) as oa:
        openai_chunks(server)
    with pytest.raises(anthropic.APIStatusError) as an:
        anthropic_client(server).messages.create(
            model="m", max_tokens=5, messages=USER_HI, stream=True
        )

    assert oa.value.body == {
        "message": "slow down",
        "type": "rate_limit_error",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    assert an.value.status_code == 529
    assert an.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "busy"},
    }


def test_sdk_retry_consumes_next_reply(server: FakeModelServer) -> None:
    server.script(Reply(status=500, error_message="flaky"), Reply(text="fine"))
    client = openai_client(server).with_options(max_retries=1)
    chunks = list(client.chat.completions.create(model="m", messages=USER_HI, stream=True))

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "fine"
    assert len(server.requests) == 2


def test_records_requests(server: FakeModelServer) -> None:
    server.script(Reply(text="x"))
    openai_chunks(server, temperature=0.5)
    request = server.requests[0]

    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "gpt-test",
        "messages": USER_HI,
        "stream": True,
        "temperature": 0.5,
    }


def test_empty_queue_answers_500_without_retry(server: FakeModelServer) -> None:
    client = openai_client(server).with_options(max_retries=3)
    with pytest.raises(openai.InternalServerError, match="no scripted reply left"):
        list(client.chat.completions.create(model="m", messages=USER_HI, stream=True))
    assert len(server.requests) == 1


def test_function_reply_sees_request(server: FakeModelServer) -> None:
    server.script(lambda body: Reply(text=f"you said {body['messages'][-1]['content']}"))
    chunks = openai_chunks(server)

    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "you said hi"


def test_failing_reply_function_answers_500(server: FakeModelServer) -> None:
    server.script(lambda body: Reply(text=body["missing"]))
    with pytest.raises(openai.InternalServerError, match="reply function failed: KeyError"):
        openai_chunks(server)


def test_non_streaming_and_unknown_paths_are_rejected(server: FakeModelServer) -> None:
    server.script(Reply(text="kept"))
    plain = httpx.post(server.base_url + "/v1/messages", json={"messages": USER_HI})
    missing = httpx.post(server.base_url + "/v2/other", json={})

    assert plain.status_code == 400
    assert "only streaming" in plain.json()["error"]["message"]
    assert missing.status_code == 404
    assert server.pending == 1


def test_slow_stream_stops_quietly_when_client_leaves(server: FakeModelServer) -> None:
    server.script(Reply(text="one two three four", chunk_delay=0.2))
    body = {"model": "m", "messages": USER_HI, "stream": True}
    started = time.monotonic()
    with httpx.stream("POST", server.openai_base_url + "/chat/completions", json=body) as r:
        lines = r.iter_lines()
        got = [next(lines) for _ in range(4)]  # role chunk and 'one ', each with a blank line
        got.append(next(lines))
        got.append(next(lines))
        second = time.monotonic() - started

    assert second >= 0.2, "the second word waits for chunk_delay"
    assert "two" in got[-2]
    deadline = time.monotonic() + 30
    while server.disconnects == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.disconnects == 1


def test_stop_ends_a_slow_stream() -> None:
    fake = FakeModelServer().start()
    fake.script(Reply(text="a b c d e f g", chunk_delay=60))
    body = {"model": "m", "messages": USER_HI, "stream": True}
    with httpx.stream("POST", fake.openai_base_url + "/chat/completions", json=body) as r:
        lines = r.iter_lines()
        next(lines)
        fake.stop()
        with pytest.raises(httpx.RemoteProtocolError):
            list(lines)


def test_command_line_entry_point(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    replies = [{"text": "from file", "tool_calls": [{"name": "ls", "arguments": {}}]}]
    script.write_text(json.dumps(replies))
    cmd = [sys.executable, "-m", "server.testing.fake_llm", "--script", str(script)]
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        CLIENTS.append(client)
        chunks = list(client.chat.completions.create(model="m", messages=USER_HI, stream=True))
        proc.terminate()
        assert proc.wait(timeout=5) == 0

    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "from file"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def ollama_lines(server: FakeModelServer, body: dict) -> tuple[httpx.Response, list[dict]]:
    response = httpx.post(server.ollama_base_url + "/api/chat", json=body)
    return response, [json.loads(line) for line in response.text.splitlines() if line]


def test_ollama_ndjson_stream(server: FakeModelServer) -> None:
    server.script(
        Reply(
            thinking="hmm ok",
            text="Hi there",
            tool_calls=[FakeToolCall("ls", {"path": "."})],
            usage=(12, 3),
        )
    )
    response, lines = ollama_lines(server, {"model": "llava", "messages": USER_HI})

    assert response.headers["content-type"] == "application/x-ndjson"
    messages = [line["message"] for line in lines]
    assert [m.get("thinking") for m in messages[:2]] == ["hmm ", "ok"]
    assert [m["content"] for m in messages[2:4]] == ["Hi ", "there"]
    assert messages[4]["tool_calls"] == [{"function": {"name": "ls", "arguments": {"path": "."}}}]
    assert [line["done"] for line in lines] == [False] * 5 + [True]
    last = lines[-1]
    assert (last["done_reason"], last["prompt_eval_count"], last["eval_count"]) == ("stop", 12, 3)
    assert all(line["model"] == "llava" for line in lines)


def test_ollama_errors_and_non_streaming(server: FakeModelServer) -> None:
    server.script(Reply(status=404, error_message="model 'x' not found"), Reply(text="kept"))
    missing = httpx.post(server.ollama_base_url + "/api/chat", json={"model": "x"})
    plain = httpx.post(server.ollama_base_url + "/api/chat", json={"model": "x", "stream": False})

    assert (missing.status_code, missing.json()) == (404, {"error": "model 'x' not found"})
    assert plain.status_code == 400 and "only streaming" in plain.json()["error"]
    assert server.pending == 1


def test_ollama_stream_error_line(server: FakeModelServer) -> None:
    server.script(Reply(text="a", stream_error="runner died"))
    _, lines = ollama_lines(server, {"model": "m", "messages": USER_HI})

    assert lines[-1] == {"error": "runner died"}


def test_cut_after_drops_the_connection_mid_stream(server: FakeModelServer) -> None:
    server.script(Reply(text="one two three four", cut_after=2))
    body = {"model": "m", "messages": USER_HI, "stream": True}
    seen = []
    with (
        httpx.stream("POST", server.openai_base_url + "/chat/completions", json=body) as r,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        for line in r.iter_lines():
            seen.append(line)

    contents = [json.loads(s[6:])["choices"][0]["delta"].get("content") for s in seen if s]
    assert contents == ["", "one ", "two "]


def test_drop_closes_without_an_answer(server: FakeModelServer) -> None:
    server.script(Reply(drop=True), Reply(text="fine"))
    with pytest.raises(openai.APIConnectionError):
        openai_chunks(server)
    assert len(openai_chunks(server)) > 1


def test_retry_after_headers(server: FakeModelServer) -> None:
    server.script(
        Reply(status=429, error_message="slow", retry_after=2, retry_after_ms=None),
        Reply(status=503, error_message="busy"),
    )
    body = {"model": "m", "messages": USER_HI, "stream": True}
    first = httpx.post(server.openai_base_url + "/chat/completions", json=body)
    second = httpx.post(server.anthropic_base_url + "/v1/messages", json=body)

    assert first.headers["retry-after"] == "2" and "retry-after-ms" not in first.headers
    assert second.headers["retry-after-ms"] == "10" and "retry-after" not in second.headers


def test_delta_times_are_recorded(server: FakeModelServer) -> None:
    server.script(Reply(text="a b c"), Reply(thinking="x y", text="z"))
    openai_chunks(server)
    list(
        anthropic_client(server).messages.create(
            model="m", max_tokens=5, messages=USER_HI, stream=True
        )
    )

    assert len(server.delta_times) == 3 + 4  # text pieces; then thinking, signature, text
    assert server.delta_times == sorted(server.delta_times)

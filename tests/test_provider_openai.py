"""The OpenAI chat completions provider against the loopback fake model server."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from server.providers import openai as openai_provider
from server.providers.base import ProviderSettings
from server.providers.messages import (
    Finish,
    ImagePart,
    Message,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCallPart,
    ToolCallReady,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply
from tests.conftest import opened

ROOT = Path(__file__).resolve().parent.parent
PNG = "data:image/png;base64,iVBORw0KGgo="
READ_TOOL = ToolSpec(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


pytestmark = pytest.mark.usefixtures("close_providers")


def provider(base_url: str, *, max_retries: int = 0, name: str = "openai", api_key="sk-test"):
    settings = ProviderSettings(
        provider=name,
        model="gpt-test",
        api_key=api_key,
        base_url=base_url,
        max_retries=max_retries,
    )
    return opened(openai_provider.create(settings))


def ask(text: str = "hi", **kw) -> ModelRequest:
    return ModelRequest(
        model="gpt-test", system="", messages=[Message("user", [TextPart(text)])], **kw
    )


async def collect(server: FakeModelServer, request: ModelRequest, **kw) -> list[StreamEvent]:
    return [event async for event in provider(server.openai_base_url, **kw).stream(request)]


def test_import_does_not_load_the_sdk() -> None:
    code = "import sys, server.providers.openai; assert 'openai' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


async def test_text_streams_in_several_deltas(server: FakeModelServer) -> None:
    server.script(Reply(text="Hello from the fake model", usage=(21, 6)))
    events = await collect(server, ask())

    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) == 5
    assert "".join(texts) == "Hello from the fake model"
    assert events[-1] == Finish("end_turn", Usage(input_tokens=21, output_tokens=6))
    assert server.requests[0].body == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_tool_call_arguments_are_assembled(server: FakeModelServer) -> None:
    calls = [
        FakeToolCall("read", {"path": "src/main.py", "limit": 40}),
        FakeToolCall("grep", {"pattern": "def \\w+"}, id="call_custom"),
    ]
    server.script(Reply(text="Reading.", tool_calls=calls))
    events = await collect(server, ask())

    assert [e for e in events if isinstance(e, ToolCallReady)] == [
        ToolCallReady(ToolCallPart("call_1", "read", {"path": "src/main.py", "limit": 40})),
        ToolCallReady(ToolCallPart("call_custom", "grep", {"pattern": "def \\w+"})),
    ]
    assert events[-1].reason == "tool_use"


def test_unparseable_arguments_are_kept_raw() -> None:
    assert openai_provider.parse_arguments('{"path": "a.py"') == {"_raw": '{"path": "a.py"'}
    assert openai_provider.parse_arguments("[1]") == {"_raw": "[1]"}
    assert openai_provider.parse_arguments("") == {}


async def test_history_is_converted_exactly(server: FakeModelServer) -> None:
    history = [
        Message("user", [TextPart("Fix the bug"), ImagePart(PNG)]),
        Message(
            "assistant",
            [
                ThinkingPart("private", signature="s"),
                TextPart("Looking."),
                ToolCallPart("call_a", "read", {"path": "a.py"}),
                ToolCallPart("call_b", "read", {"path": "b.py"}),
            ],
        ),
        Message(
            "tool",
            [
                ToolResultPart("call_a", "read", "print(1)"),
                ToolResultPart("call_b", "read", "no such file", is_error=True),
            ],
        ),
        Message("assistant", [ToolCallPart("call_c", "read", {})]),
        Message("tool", [ToolResultPart("call_c", "read", "x")]),
        Message("user", [TextPart("Also this"), TextPart("and that")]),
    ]
    request = ModelRequest(
        model="gpt-test",
        system="You are terse.",
        messages=history,
        tools=[READ_TOOL],
        options={"maxTokens": 512, "temperature": 0.2, "thinking": {"type": "enabled"}},
    )
    server.script(Reply(text="ok"))
    await collect(server, request)
    body = server.requests[0].body

    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Fix the bug"},
                {"type": "image_url", "image_url": {"url": PNG}},
            ],
        },
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "b.py"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "print(1)"},
        {"role": "tool", "tool_call_id": "call_b", "content": "no such file"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_c",
                    "type": "function",
                    "function": {"name": "read", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_c", "content": "x"},
        {"role": "user", "content": "Also this\n\nand that"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    assert (body["max_tokens"], body["temperature"]) == (512, 0.2)
    assert "thinking" not in body


async def test_images_in_tool_messages_follow_as_user_content(server: FakeModelServer) -> None:
    history = [
        Message("assistant", [ToolCallPart("call_s", "screenshot", {})]),
        Message("tool", [ToolResultPart("call_s", "screenshot", "captured"), ImagePart(PNG)]),
    ]
    server.script(Reply(text="ok"))
    await collect(server, ModelRequest(model="gpt-test", system="", messages=history))

    assert server.requests[0].body["messages"][1:] == [
        {"role": "tool", "tool_call_id": "call_s", "content": "captured"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG}}]},
    ]


async def test_tool_result_images_follow_the_step_as_one_user_message(
    server: FakeModelServer,
) -> None:
    history = [
        Message(
            "assistant", [ToolCallPart("call_s", "shot", {}), ToolCallPart("call_t", "ls", {})]
        ),
        Message(
            "tool",
            [
                ToolResultPart("call_s", "shot", "captured", images=[ImagePart(PNG)]),
                ToolResultPart("call_t", "ls", "a.py"),
            ],
        ),
    ]
    server.script(Reply(text="ok"))
    await collect(server, ModelRequest(model="gpt-test", system="", messages=history))

    assert server.requests[0].body["messages"][1:] == [
        {"role": "tool", "tool_call_id": "call_s", "content": "captured"},
        {"role": "tool", "tool_call_id": "call_t", "content": "a.py"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images returned by tool calls:"},
                {"type": "image_url", "image_url": {"url": PNG}},
            ],
        },
    ]


async def test_reasoning_models_use_max_completion_tokens(server: FakeModelServer) -> None:
    server.script(Reply(text="ok"))
    options = {"maxTokens": 100, "temperature": 0.3, "reasoningEffort": "high"}
    request = ModelRequest(model="o3-mini", system="", messages=ask().messages, options=options)
    await collect(server, request)
    body = server.requests[0].body

    assert (body["max_completion_tokens"], body["reasoning_effort"]) == (100, "high")
    assert "max_tokens" not in body and "temperature" not in body


async def test_usage_maps_cached_prompt_tokens(server: FakeModelServer) -> None:
    server.script(Reply(text="ok", usage=(30, 9), cache_tokens=(70, 0)))
    events = await collect(server, ask())

    assert events[-1].usage == Usage(input_tokens=30, output_tokens=9, cache_read_tokens=70)


async def test_reasoning_content_becomes_thinking(server: FakeModelServer) -> None:
    server.script(Reply(thinking="Check the tests first", text="Done."))
    events = await collect(server, ask())

    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(e.text for e in thinking) == "Check the tests first"
    assert len(thinking) == 4
    assert events.index(thinking[-1]) < next(
        i for i, e in enumerate(events) if isinstance(e, TextDelta)
    )


@pytest.mark.parametrize(
    ("stop", "reason"),
    [("length", "max_tokens"), ("content_filter", "refusal"), ("weird", "other")],
)
async def test_finish_reasons(server: FakeModelServer, stop: str, reason: str) -> None:
    server.script(Reply(text="cut", stop_reason=stop))
    events = await collect(server, ask())

    assert events[-1].reason == reason


async def test_http_500_becomes_provider_error(server: FakeModelServer) -> None:
    server.script(Reply(status=500, error_message="boom"))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask())

    assert str(info.value) == "openai: HTTP 500: boom"
    assert (info.value.status, info.value.retryable) == (500, True)


async def test_error_inside_the_stream(server: FakeModelServer) -> None:
    server.script(Reply(text="partial answer", stream_error="model crashed"))
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider(server.openai_base_url).stream(ask()):
            events.append(event)

    assert events == [TextDelta("partial "), TextDelta("answer")]
    assert str(info.value) == "openai: server_error: model crashed"
    assert (info.value.status, info.value.retryable) == (None, True)


async def test_auth_error_names_the_key_variable(server: FakeModelServer) -> None:
    server.script(Reply(status=401, error_message="Incorrect API key provided"))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask())

    assert str(info.value) == "openai: HTTP 401: Incorrect API key provided (check OPENAI_API_KEY)"
    assert (info.value.status, info.value.retryable) == (401, False)


async def test_the_sdk_does_not_retry_on_its_own(server: FakeModelServer) -> None:
    server.script(Reply(status=503, error_message="busy"), Reply(text="never reached"))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask(), max_retries=2)

    assert (info.value.status, info.value.retryable, info.value.retry_after) == (503, True, 0.01)
    assert len(server.requests) == 1


async def test_rate_limit_carries_retry_after(server: FakeModelServer) -> None:
    server.script(Reply(status=429, error_message="slow down", retry_after_ms=None, retry_after=3))
    with pytest.raises(ProviderError, match="HTTP 429: slow down") as info:
        await collect(server, ask())

    assert info.value.retry_after == 3.0


async def test_stream_cut_midway_is_retryable(server: FakeModelServer) -> None:
    server.script(Reply(text="one two three four", cut_after=2))
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider(server.openai_base_url).stream(ask()):
            events.append(event)

    assert events == [TextDelta("one "), TextDelta("two ")]
    assert info.value.retryable


async def test_connection_reset_is_retryable(server: FakeModelServer) -> None:
    server.script(Reply(drop=True))
    with pytest.raises(ProviderError, match="openai: cannot reach") as info:
        await collect(server, ask())

    assert info.value.retryable


async def test_presets_name_their_key_variable(server: FakeModelServer) -> None:
    server.script(Reply(status=401, error_message="bad key"))
    with pytest.raises(ProviderError) as info:
        async for _ in provider(server.openai_base_url, name="deepseek").stream(ask()):
            pass

    assert str(info.value) == "deepseek: HTTP 401: bad key (check DEEPSEEK_API_KEY)"
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_reasoning_effort_option(server: FakeModelServer) -> None:
    server.script(Reply(text="ok"), Reply(text="ok"))
    reasoning = {"maxTokens": 64, "reasoning": {"effort": "medium"}}
    await collect(server, ModelRequest("o4-mini", "", ask().messages, options=reasoning))
    explicit = {**reasoning, "reasoningEffort": "low"}
    await collect(server, ModelRequest("o4-mini", "", ask().messages, options=explicit))

    assert server.requests[0].body["reasoning_effort"] == "medium"
    assert server.requests[1].body["reasoning_effort"] == "low"


async def test_unreachable_server() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    with pytest.raises(
        ProviderError, match=r"deepseek: cannot reach http://127\.0\.0\.1:\d+/v1/"
    ) as info:
        async for _ in provider(url, name="deepseek").stream(ask()):
            pass

    assert info.value.retryable


def test_missing_key_without_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        openai_provider.create(ProviderSettings(provider="openai", model="gpt-test"))


async def test_local_server_needs_no_key(server: FakeModelServer, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script(Reply(text="local"))
    local = provider(server.openai_base_url, name="ollama", api_key=None)
    events = [e async for e in local.stream(ask())]

    assert events[-1].reason == "end_turn"


async def test_cancel_mid_stream_returns_promptly(server: FakeModelServer) -> None:
    server.script(Reply(text="one two three four five six", chunk_delay=60))
    seen: list[StreamEvent] = []
    with anyio.fail_after(30), anyio.CancelScope() as scope:
        async for event in provider(server.openai_base_url).stream(ask()):
            seen.append(event)
            scope.cancel()

    assert scope.cancelled_caught
    assert seen == [TextDelta("one ")]
    await wait_for_disconnect(server)


async def test_task_cancel_propagates(server: FakeModelServer) -> None:
    server.script(Reply(text="one two three four", chunk_delay=60))
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in provider(server.openai_base_url).stream(ask()):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    await wait_for_disconnect(server)


async def wait_for_disconnect(server: FakeModelServer) -> None:
    with anyio.fail_after(30):
        while server.disconnects == 0:
            await anyio.sleep(0.01)


@pytest.mark.parametrize("calls", [[], [FakeToolCall("read_file", {"path": "a"}, id="c1")]])
async def test_done_without_a_finish_reason_is_a_finished_reply(server, calls) -> None:
    server.script(Reply(text="all here", tool_calls=calls, no_finish_reason=True))
    events = await collect(server, ask())

    assert events[0] == TextDelta("all ")
    assert events[-1] == Finish("tool_use" if calls else "end_turn", Usage(10, 5))
    assert [e.call.id for e in events if isinstance(e, ToolCallReady)] == [c.id for c in calls]

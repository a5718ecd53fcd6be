"""The Anthropic messages provider against the loopback fake model server."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from server.providers import anthropic as anthropic_provider
from server.providers.base import ProviderSettings
from server.providers.messages import (
    Finish,
    ImagePart,
    Message,
    ModelRequest,
    Part,
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
EPHEMERAL = {"type": "ephemeral"}
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [ToolSpec("read", "Read a file", SCHEMA), ToolSpec("ls", "List a directory", {})]


pytestmark = pytest.mark.usefixtures("close_providers")


def provider(server: FakeModelServer, *, max_retries: int = 0):
    settings = ProviderSettings(
        provider="anthropic",
        model="claude-test",
        api_key="sk-ant-test",
        base_url=server.anthropic_base_url,
        max_retries=max_retries,
    )
    return opened(anthropic_provider.create(settings))


def ask(text: str = "hi", **kw) -> ModelRequest:
    return ModelRequest(
        model="claude-test", system="", messages=[Message("user", [TextPart(text)])], **kw
    )


async def collect(server: FakeModelServer, request: ModelRequest, **kw) -> list[StreamEvent]:
    return [event async for event in provider(server, **kw).stream(request)]


def assistant_message(events: list[StreamEvent]) -> Message:
    """What an agent loop keeps from a streamed reply."""
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    signature = next(
        (e.signature for e in events if isinstance(e, ThinkingDelta) and e.signature), None
    )
    parts: list[Part] = [ThinkingPart(thinking, signature)] if thinking else []
    parts.append(TextPart("".join(e.text for e in events if isinstance(e, TextDelta))))
    parts += [e.call for e in events if isinstance(e, ToolCallReady)]
    return Message("assistant", parts)


def test_import_does_not_load_the_sdk() -> None:
    code = "import sys, server.providers.anthropic; assert 'anthropic' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


async def test_text_streams_in_several_deltas(server: FakeModelServer) -> None:
    server.script(Reply(text="Hello from the fake model"))
    events = await collect(server, ask())

    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) == 5
    assert "".join(texts) == "Hello from the fake model"
    assert events[-1] == Finish("end_turn", Usage(input_tokens=10, output_tokens=5))
    assert server.requests[0].body == {
        "model": "claude-test",
        "max_tokens": 8192,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}],
            }
        ],
        "stream": True,
    }


async def test_tool_call_input_is_assembled(server: FakeModelServer) -> None:
    calls = [
        FakeToolCall("read", {"path": "src/main.py", "limit": 40}),
        FakeToolCall("ls", {}, id="toolu_custom"),
    ]
    server.script(Reply(text="Reading.", tool_calls=calls))
    events = await collect(server, ask())

    assert [e for e in events if isinstance(e, ToolCallReady)] == [
        ToolCallReady(ToolCallPart("toolu_1", "read", {"path": "src/main.py", "limit": 40})),
        ToolCallReady(ToolCallPart("toolu_custom", "ls", {})),
    ]
    assert events[-1].reason == "tool_use"


def test_unparseable_input_is_kept_raw() -> None:
    assert anthropic_provider.parse_arguments('{"a": ') == {"_raw": '{"a": '}
    assert anthropic_provider.parse_arguments("  ") == {}


async def test_history_is_converted_exactly(server: FakeModelServer) -> None:
    history = [
        Message("user", [TextPart("Fix the bug"), ImagePart(PNG)]),
        Message(
            "assistant",
            [
                ThinkingPart("unsigned, dropped"),
                ThinkingPart("I should read both", signature="sig_abc"),
                TextPart("Looking."),
                ToolCallPart("toolu_a", "read", {"path": "a.py"}),
                ToolCallPart("toolu_b", "read", {"path": "b.py"}),
            ],
        ),
        Message("tool", [ToolResultPart("toolu_a", "read", "print(1)")]),
        Message("tool", [ToolResultPart("toolu_b", "read", "no such file", is_error=True)]),
        Message("user", [TextPart("Also check c.py"), TextPart("")]),
        Message("assistant", [TextPart("Done.")]),
        Message("user", [TextPart("Thanks")]),
    ]
    request = ModelRequest(
        model="claude-test",
        system="You are terse.",
        messages=history,
        tools=TOOLS,
        options={"maxTokens": 1024, "temperature": 0.2},
    )
    server.script(Reply(text="ok"))
    await collect(server, request)
    body = server.requests[0].body

    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": EPHEMERAL}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Fix the bug"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should read both", "signature": "sig_abc"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "b.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "content": "print(1)",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": "no such file",
                    "is_error": True,
                },
                {"type": "text", "text": "Also check c.py"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Thanks", "cache_control": EPHEMERAL}],
        },
    ]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": SCHEMA},
        {
            "name": "ls",
            "description": "List a directory",
            "input_schema": {},
            "cache_control": EPHEMERAL,
        },
    ]
    assert body["max_tokens"] == 1024
    assert "temperature" not in body  # rejected by API version 2026-10-21


async def test_tool_result_images_become_image_blocks(server: FakeModelServer) -> None:
    history = [
        Message("assistant", [ToolCallPart("toolu_s", "screenshot", {})]),
        Message(
            "tool", [ToolResultPart("toolu_s", "screenshot", "captured", images=[ImagePart(PNG)])]
        ),
    ]
    server.script(Reply(text="ok"))
    await collect(server, ModelRequest(model="claude-test", system="", messages=history))

    assert server.requests[0].body["messages"][1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_s",
                "content": [
                    {"type": "text", "text": "captured"},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo=",
                        },
                    },
                ],
                "is_error": False,
                "cache_control": EPHEMERAL,
            }
        ],
    }


async def test_thinking_and_signature_round_trip(server: FakeModelServer) -> None:
    server.script(
        Reply(thinking="The user wants a listing", tool_calls=[FakeToolCall("ls", {"path": "."})]),
        Reply(text="Two files."),
    )
    options = {"thinking": {"type": "enabled", "budget_tokens": 2048}, "temperature": 0.7}
    first = await collect(server, ask("what is here?", options=options))

    thinking = [e for e in first if isinstance(e, ThinkingDelta)]
    assert "".join(e.text for e in thinking) == "The user wants a listing"
    assert thinking[-1].text == "" and thinking[-1].signature.startswith("sig_")
    reply = assistant_message(first)
    history = [
        *ask("what is here?").messages,
        reply,
        Message("tool", [ToolResultPart("toolu_1", "ls", "a.py\nb.py")]),
    ]
    await collect(server, ModelRequest("claude-test", "", history, options=options))
    body = server.requests[1].body

    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "The user wants a listing",
                "signature": thinking[-1].signature,
            },
            {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
        ],
    }
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body


async def test_output_config_passes_through(server: FakeModelServer) -> None:
    server.script(Reply(text="ok"))
    options = {
        "output_config": {"effort": "low"},
        "thinking": {"type": "adaptive"},
        "stop": ["END"],
    }
    await collect(server, ask(options=options))
    body = server.requests[0].body

    assert body["output_config"] == {"effort": "low"}
    assert body["thinking"] == {"type": "adaptive"}
    assert body["stop_sequences"] == ["END"]


async def test_usage_includes_cache_tokens(server: FakeModelServer) -> None:
    server.script(Reply(text="ok", usage=(12, 34), cache_tokens=(900, 50)))
    events = await collect(server, ask())

    assert events[-1].usage == Usage(
        input_tokens=12, output_tokens=34, cache_read_tokens=900, cache_write_tokens=50
    )


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "end_turn"),
        ("refusal", "refusal"),
        ("pause_turn", "other"),
    ],
)
async def test_finish_reasons(server: FakeModelServer, stop: str, reason: str) -> None:
    server.script(Reply(text="cut", stop_reason=stop))
    events = await collect(server, ask())

    assert events[-1].reason == reason


async def test_http_500_becomes_provider_error(server: FakeModelServer) -> None:
    server.script(Reply(status=500, error_message="boom"))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask())

    assert str(info.value) == "anthropic: HTTP 500: boom"
    assert (info.value.status, info.value.retryable) == (500, True)


async def test_error_inside_the_stream(server: FakeModelServer) -> None:
    server.script(Reply(text="partial answer", stream_error="model crashed"))
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider(server).stream(ask()):
            events.append(event)

    assert events == [TextDelta("partial "), TextDelta("answer")]
    assert str(info.value) == "anthropic: overloaded_error: model crashed"
    assert (info.value.status, info.value.retryable) == (None, True)


async def test_auth_error_names_the_key_variable(server: FakeModelServer) -> None:
    server.script(Reply(status=401, error_message="invalid x-api-key"))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask())

    assert str(info.value) == "anthropic: HTTP 401: invalid x-api-key (check ANTHROPIC_API_KEY)"
    assert (info.value.status, info.value.retryable) == (401, False)


async def test_bad_request_is_not_retryable(server: FakeModelServer) -> None:
    server.script(Reply(status=400, error_message="messages: roles must alternate"))
    with pytest.raises(ProviderError, match="HTTP 400: messages: roles must alternate") as info:
        await collect(server, ask(), max_retries=2)

    assert (info.value.status, info.value.retryable) == (400, False)
    assert len(server.requests) == 1


async def test_the_sdk_does_not_retry_on_its_own(server: FakeModelServer) -> None:
    server.script(Reply(status=529, error_message="Overloaded", retry_after_ms=1500))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask(), max_retries=3)

    assert str(info.value) == "anthropic: HTTP 529: Overloaded"
    assert (info.value.retryable, info.value.retry_after) == (True, 1.5)
    assert len(server.requests) == 1


async def test_rate_limit_carries_retry_after_seconds(server: FakeModelServer) -> None:
    server.script(Reply(status=429, error_message="slow down", retry_after_ms=None, retry_after=7))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask())

    assert (info.value.status, info.value.retryable, info.value.retry_after) == (429, True, 7.0)


async def test_stream_cut_midway_is_retryable(server: FakeModelServer) -> None:
    server.script(Reply(text="one two three four", cut_after=2))
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider(server).stream(ask()):
            events.append(event)

    assert events == [TextDelta("one "), TextDelta("two ")]
    assert "the stream was cut before the reply finished" in str(info.value)
    assert info.value.retryable


async def test_connection_reset_is_retryable(server: FakeModelServer) -> None:
    server.script(Reply(drop=True))
    with pytest.raises(ProviderError, match="anthropic: cannot reach") as info:
        await collect(server, ask())

    assert info.value.retryable


async def test_cache_marker_ends_the_stored_history_not_the_turn_context(
    server: FakeModelServer,
) -> None:
    history = [
        Message("user", [TextPart("read a.py")]),
        Message("assistant", [ToolCallPart("toolu_a", "read", {"path": "a.py"})]),
        Message("tool", [ToolResultPart("toolu_a", "read", "print(1)")]),
    ]
    context = Message("user", [TextPart("<turn-context>cwd: /w</turn-context>")])
    request = ModelRequest("claude-test", "sys", [*history, context], TOOLS, stable_prefix=3)
    server.script(Reply(text="ok"))
    await collect(server, request)

    assert server.requests[0].body["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_a",
                "content": "print(1)",
                "is_error": False,
                "cache_control": EPHEMERAL,
            },
            {"type": "text", "text": "<turn-context>cwd: /w</turn-context>"},
        ],
    }
    marked = [
        b for m in server.requests[0].body["messages"] for b in m["content"] if "cache_control" in b
    ]
    assert len(marked) == 1


def test_cache_marker_skips_thinking_blocks() -> None:
    history = [
        Message("user", [TextPart("go")]),
        Message("assistant", [ThinkingPart("hmm", signature="sig")]),
    ]
    wire = anthropic_provider.to_wire_messages(history)

    assert wire[0]["content"][0]["cache_control"] == EPHEMERAL
    assert "cache_control" not in wire[1]["content"][0]
    assert anthropic_provider.to_wire_messages(history, cache_at=0)[0]["content"] == [
        {"type": "text", "text": "go"}
    ]


def test_missing_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.delenv("ANTHROPIC_FEDERATION_RULE_ID", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        anthropic_provider.create(ProviderSettings(provider="anthropic", model="claude-test"))


async def test_cancel_mid_stream_returns_promptly(server: FakeModelServer) -> None:
    server.script(Reply(text="one two three four five six", chunk_delay=60))
    seen: list[StreamEvent] = []
    with anyio.fail_after(30), anyio.CancelScope() as scope:
        async for event in provider(server).stream(ask()):
            seen.append(event)
            scope.cancel()

    assert seen == [TextDelta("one ")]
    await wait_for_disconnect(server)


async def test_task_cancel_propagates(server: FakeModelServer) -> None:
    server.script(Reply(thinking="a b c d e", chunk_delay=60))
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in provider(server).stream(ask()):
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

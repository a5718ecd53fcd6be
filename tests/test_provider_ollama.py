"""Ollama's native `/api/chat` provider against the loopback fake model server."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from server.providers import ollama as ollama_provider
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
READ = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {}}})


pytestmark = pytest.mark.usefixtures("close_providers")


def provider(base_url: str):
    settings = ProviderSettings(provider="ollama", model="llama3.2", base_url=base_url)
    return opened(ollama_provider.create(settings))


def ask(text: str = "hi", **kw) -> ModelRequest:
    return ModelRequest(model="", system="", messages=[Message("user", [TextPart(text)])], **kw)


async def collect(server: FakeModelServer, request: ModelRequest) -> list[StreamEvent]:
    return [e async for e in provider(server.ollama_base_url).stream(request)]


def test_import_does_not_load_httpx() -> None:
    code = "import sys, server.providers.ollama; assert 'httpx' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


async def test_text_streams_with_usage(server: FakeModelServer) -> None:
    server.script(Reply(text="Hello from the fake model", usage=(31, 7)))
    events = await collect(server, ask())

    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "Hello ",
        "from ",
        "the ",
        "fake ",
        "model",
    ]
    assert events[-1] == Finish("end_turn", Usage(input_tokens=31, output_tokens=7))
    request = server.requests[0]
    assert request.path == "/api/chat"
    assert request.body == {
        "model": "llama3.2",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
    }


async def test_tool_calls_and_thinking(server: FakeModelServer) -> None:
    calls = [FakeToolCall("read", {"path": "a.py"}), FakeToolCall("read", {"path": "b.py"})]
    server.script(Reply(thinking="Need both files", tool_calls=calls))
    events = await collect(server, ask(tools=[READ]))

    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Need both files"
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("read", {"path": "a.py"}),
        ("read", {"path": "b.py"}),
    ]
    assert len({c.id for c in calls}) == 2 and all(c.id.startswith("call_") for c in calls)
    assert events[-1].reason == "tool_use"
    assert server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": READ.parameters,
            },
        }
    ]


async def test_history_and_images_on_the_wire(server: FakeModelServer) -> None:
    history = [
        Message("user", [TextPart("What is this?"), ImagePart(PNG), ImagePart(PNG)]),
        Message(
            "assistant",
            [
                ThinkingPart("hidden"),
                TextPart("Let me read."),
                ToolCallPart("c1", "read", {"path": "a.py"}),
            ],
        ),
        Message("tool", [ToolResultPart("c1", "read", "print(1)")]),
        Message("user", [ImagePart(PNG)]),
    ]
    options = {"maxTokens": 300, "temperature": 0.1, "topP": 0.9, "stop": ["END"], "x": 1}
    server.script(Reply(text="ok"))
    await collect(server, ModelRequest("llava", "Be brief.", history, options=options))
    body = server.requests[0].body

    assert body["model"] == "llava"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is this?", "images": ["iVBORw0KGgo=", "iVBORw0KGgo="]},
        {
            "role": "assistant",
            "content": "Let me read.",
            "thinking": "hidden",
            "tool_calls": [{"function": {"name": "read", "arguments": {"path": "a.py"}}}],
        },
        {"role": "tool", "content": "print(1)", "tool_name": "read"},
        {"role": "user", "content": "", "images": ["iVBORw0KGgo="]},
    ]
    assert body["options"] == {
        "num_predict": 300,
        "temperature": 0.1,
        "top_p": 0.9,
        "stop": ["END"],
    }


async def test_tool_result_images_ride_on_the_tool_message(server: FakeModelServer) -> None:
    history = [
        Message("assistant", [ToolCallPart("c1", "shot", {})]),
        Message("tool", [ToolResultPart("c1", "shot", "captured", images=[ImagePart(PNG)])]),
    ]
    server.script(Reply(text="ok"))
    await collect(server, ModelRequest("llava", "", history))

    assert server.requests[0].body["messages"][1:] == [
        {"role": "tool", "content": "captured", "tool_name": "shot", "images": ["iVBORw0KGgo="]},
    ]


async def test_length_stop(server: FakeModelServer) -> None:
    server.script(Reply(text="cut", stop_reason="max_tokens"))
    events = await collect(server, ask())

    assert events[-1].reason == "max_tokens"


@pytest.mark.parametrize(
    ("status", "retryable"), [(404, False), (500, True), (503, True), (429, True)]
)
async def test_http_errors(server: FakeModelServer, status: int, retryable: bool) -> None:
    server.script(Reply(status=status, error_message="model 'x' not found"))
    with pytest.raises(ProviderError) as info:
        await collect(server, ask())

    assert str(info.value) == f"ollama: HTTP {status}: model 'x' not found"
    assert (info.value.status, info.value.retryable) == (status, retryable)


async def test_error_inside_the_stream(server: FakeModelServer) -> None:
    server.script(Reply(text="partial", stream_error="runner crashed"))
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="ollama: runner crashed"):
        async for event in provider(server.ollama_base_url).stream(ask()):
            events.append(event)

    assert events == [TextDelta("partial")]


async def test_cut_stream_is_retryable(server: FakeModelServer) -> None:
    server.script(Reply(text="a b c d", cut_after=1))
    with pytest.raises(ProviderError, match="the stream was cut") as info:
        await collect(server, ask())

    assert info.value.retryable


async def test_unreachable_server() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(ProviderError, match=r"ollama: cannot reach http://127\.0\.0\.1") as info:
        async for _ in provider(url).stream(ask()):
            pass

    assert info.value.retryable

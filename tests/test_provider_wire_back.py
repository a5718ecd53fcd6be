"""What each provider adapter sends back: reasoning write-back, thinking blocks kept verbatim and
in order, per-model options, error reasons, unique tool-call ids. Readers are driven through the
loopback fake; builders are called directly."""

from __future__ import annotations

import json

import pytest

from server.providers import anthropic as anthropic_provider
from server.providers import catalog, options, thinking
from server.providers import ollama as ollama_provider
from server.providers import openai as openai_provider
from server.providers.base import ProviderSettings
from server.providers.errors import status_error
from server.providers.messages import (
    Finish,
    ImagePart,
    Message,
    ModelRequest,
    ReplyParts,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCallPart,
    ToolCallReady,
    Usage,
)
from server.providers.thinking import ThinkingRequest
from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply
from server.testing.fake_rules import signature
from tests.conftest import opened

PNG = "data:image/png;base64,iVBORw0KGgo="
CALL = ToolCallPart("call_a", "list_dir", {})
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"}
DETAIL = {"type": "reasoning.text", "text": "plan", "signature": "sig_x", "index": 0}


pytestmark = pytest.mark.usefixtures("close_providers")


def create(module, name: str, model: str, base_url: str):
    settings = ProviderSettings(provider=name, model=model, api_key="k", base_url=base_url)
    return opened(module.create(settings))


def ask(model: str, *messages: Message) -> ModelRequest:
    return ModelRequest(model=model, system="", messages=list(messages) or [user("hi")])


def user(text: str) -> Message:
    return Message("user", [TextPart(text)])


async def events(provider, request: ModelRequest) -> list[StreamEvent]:
    return [e async for e in provider.stream(request)]


def reply_message(stream: list[StreamEvent]) -> Message:
    content = ReplyParts()
    for event in stream:
        if isinstance(event, TextDelta | ThinkingDelta):
            content.add(event)
    calls = [e.call for e in stream if isinstance(e, ToolCallReady)]
    return Message("assistant", [*content.parts(), *calls])


THOUGHT = Message("assistant", [ThinkingPart("Let me check"), TextPart("Looking."), CALL])


# -- 1. reasoning write-back -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model", "field"),
    [
        ("deepseek", "deepseek-reasoner", "reasoning_content"),
        ("moonshot", "kimi-k2-thinking", "reasoning_content"),
        ("openai", "kimi-k2.5", "reasoning_content"),
        ("openai", "gpt-4.1", None),
        ("qwen", "qwen-plus", None),
    ],
)
def test_openai_wire_writes_back_what_the_provider_needs(provider, model, field) -> None:
    params = openai_provider.build_params(ask(model, user("hi"), THOUGHT), provider=provider)
    assistant = params["messages"][1]
    assert assistant["content"] == "Looking."
    extra = {"reasoning_content", "reasoning_details"} & assistant.keys()
    assert extra == ({field} if field else set())
    if field:
        assert assistant[field] == "Let me check"


def test_reasoning_content_is_present_even_without_thinking() -> None:
    bare = Message("assistant", [CALL])
    params = openai_provider.build_params(
        ask("deepseek-reasoner", user("hi"), bare), provider="deepseek"
    )
    assert params["messages"][1]["reasoning_content"] == ""


def test_openrouter_gets_its_reasoning_details_verbatim() -> None:
    message = Message("assistant", [ThinkingPart("plan"), ThinkingPart("", raw=DETAIL), CALL])
    params = openai_provider.build_params(
        ask("moonshotai/kimi-k2-thinking", user("hi"), message), provider="openrouter"
    )
    assistant = params["messages"][1]
    assert assistant["reasoning_details"] == [DETAIL]
    assert "reasoning_content" not in assistant


async def test_openrouter_reasoning_details_are_gathered_with_their_signature(
    server: FakeModelServer,
) -> None:
    server.script(Reply(thinking="Let me check", tool_calls=[FakeToolCall("list_dir", {})]))
    provider = create(
        openai_provider, "openrouter", "moonshotai/kimi-k2-thinking", server.openai_base_url
    )
    stream = await events(provider, ask("moonshotai/kimi-k2-thinking"))
    message = reply_message(stream)
    raws = [p.raw for p in message.parts if isinstance(p, ThinkingPart) and p.raw]
    assert raws == [
        {
            "type": "reasoning.text",
            "format": "unknown",
            "index": 0,
            "text": "Let me check",
            "signature": signature("Let me check"),
        }
    ]
    shown = "".join(e.text for e in stream if isinstance(e, ThinkingDelta))
    assert shown == "Let me check"


def test_ollama_writes_thinking_back() -> None:
    wire = ollama_provider.to_wire_messages("", [user("hi"), THOUGHT])
    assert wire[1]["thinking"] == "Let me check" and wire[1]["content"] == "Looking."


# -- 4 and 6. Anthropic blocks verbatim and in order -------------------------------------------


async def test_redacted_thinking_is_kept_and_returned(server: FakeModelServer) -> None:
    server.script(
        Reply(
            blocks=[{"type": "thinking", "thinking": "hm"}, REDACTED],
            tool_calls=[FakeToolCall("list_dir", {}, id="toolu_9")],
        )
    )
    provider = create(
        anthropic_provider, "anthropic", "claude-sonnet-4-5", server.anthropic_base_url
    )
    message = reply_message(await events(provider, ask("claude-sonnet-4-5")))
    wire = anthropic_provider.to_wire_messages([user("hi"), message])[1]["content"]
    assert [{k: v for k, v in b.items() if k != "cache_control"} for b in wire] == [
        {"type": "thinking", "thinking": "hm", "signature": signature("hm")},
        REDACTED,
        {"type": "tool_use", "id": "toolu_9", "name": "list_dir", "input": {}},
    ]


def test_anthropic_blocks_keep_their_order() -> None:
    message = Message(
        "assistant",
        [TextPart("a"), ThinkingPart("t", "sig"), TextPart("b"), CALL],
    )
    wire = anthropic_provider.to_wire_messages([user("hi"), message], cache_at=0)[1]["content"]
    assert [b["type"] for b in wire] == ["text", "thinking", "text", "tool_use"]


def test_other_providers_raw_blocks_do_not_reach_anthropic() -> None:
    message = Message("assistant", [ThinkingPart("", raw=DETAIL), TextPart("a")])
    wire = anthropic_provider.to_wire_messages([user("hi"), message], cache_at=0)[1]["content"]
    assert wire == [{"type": "text", "text": "a"}]


def test_reply_parts_split_on_signatures_and_kinds() -> None:
    content = ReplyParts()
    for event in (
        ThinkingDelta("a"),
        ThinkingDelta("b"),
        ThinkingDelta("", signature="s1"),
        ThinkingDelta("c"),
        TextDelta("x"),
        ThinkingDelta("", raw=REDACTED),
        TextDelta("y"),
        TextDelta("z"),
    ):
        content.add(event)
    assert content.parts() == [
        ThinkingPart("ab", "s1"),
        ThinkingPart("c"),
        TextPart("x"),
        ThinkingPart("", raw=REDACTED),
        TextPart("yz"),
    ]


# -- 2, 3, 5, 10. options per model ------------------------------------------------------------


@pytest.mark.parametrize("model", ["kimi-k2.5", "kimi-k2.6", "kimi-k3", "kimi-k2-thinking"])
def test_kimi_thinking_models_take_temperature_one(model) -> None:
    merged = options.resolve("moonshot", model, {"temperature": 0.3})
    request = ModelRequest(model=model, system="", messages=[user("hi")], options=merged)
    params = openai_provider.build_params(request, provider="moonshot")
    assert params["temperature"] == 1


def test_other_moonshot_models_keep_the_default_temperature() -> None:
    assert options.resolve("moonshot", "kimi-k2-0905-preview")["temperature"] == 0.7


@pytest.mark.parametrize(
    ("model", "level", "effort"),
    [
        ("claude-opus-4-6", "ultra", "max"),
        ("claude-sonnet-4-6", "ultra", "max"),
        ("claude-opus-4-7", "ultra", "xhigh"),
        ("claude-opus-4-8", "ultra", "xhigh"),
        ("claude-opus-4-6", "hard", "high"),
        ("claude-opus-4-6", "think", "medium"),
    ],
)
def test_effort_per_model_family(model, level, effort) -> None:
    extra = thinking.options("anthropic", model, ThinkingRequest(level), max_tokens=16384)
    assert extra["output_config"] == {"effort": effort}


def test_haiku_4_5_gets_a_thinking_budget() -> None:
    extra = thinking.options(
        "anthropic", "claude-haiku-4-5", ThinkingRequest(True), max_tokens=4096
    )
    assert extra["thinking"]["type"] == "enabled"
    merged = options.merge({"maxTokens": 4096}, extra)
    assert merged["maxTokens"] > extra["thinking"]["budget_tokens"]


def test_legacy_thinking_raises_max_tokens_for_the_answer() -> None:
    extra = thinking.options(
        "anthropic", "claude-sonnet-4-5", ThinkingRequest(True), max_tokens=8192
    )
    assert extra["thinking"]["budget_tokens"] == 8000
    assert extra["maxTokens"] - 8000 >= 8192


def test_thinking_a_model_cannot_do_is_noticed(caplog) -> None:
    with caplog.at_level("WARNING", logger="server.providers.thinking"):
        assert (
            thinking.options("openai", "deepseek-chat", ThinkingRequest("hard"), max_tokens=1) == {}
        )
    assert "deepseek-chat cannot think on request" in caplog.text


@pytest.mark.parametrize(
    ("model", "least"),
    [
        ("gpt-5", 32_000),
        ("o3", 32_000),
        ("gpt-4.1", 4096),
    ],
)
def test_output_caps_come_from_the_catalogue(model, least) -> None:
    assert options.resolve("openai", model)["maxTokens"] >= least


# -- 7. errors ---------------------------------------------------------------------------------


def test_openrouter_error_names_the_upstream_reason() -> None:
    raw = json.dumps({"error": {"message": "Rate limit reached for kimi-k2"}})
    body = {
        "error": {
            "message": "Provider returned error",
            "code": 429,
            "metadata": {"raw": raw, "provider_name": "Moonshot AI"},
        }
    }
    error = status_error("openrouter", 429, body, key_env="OPENROUTER_API_KEY")
    assert str(error) == (
        "openrouter: HTTP 429: Provider returned error (Moonshot AI: Rate limit reached for kimi-k2)"
    )


async def test_error_after_length_finishes_with_max_tokens(server: FakeModelServer) -> None:
    server.script(
        Reply(
            text="long",
            stop_reason="length",
            stream_error="Provider returned error",
            usage=(30, 12),
        )
    )
    provider = create(openai_provider, "openrouter", "moonshotai/kimi-k2", server.openai_base_url)
    stream = await events(provider, ask("moonshotai/kimi-k2"))
    assert stream[-1] == Finish("max_tokens", Usage(input_tokens=30, output_tokens=12))


# -- 8. ids ------------------------------------------------------------------------------------


async def test_ollama_ids_differ_across_calls(server: FakeModelServer) -> None:
    server.script(
        Reply(tool_calls=[FakeToolCall("a", {}), FakeToolCall("b", {})]),
        Reply(tool_calls=[FakeToolCall("a", {})]),
    )
    provider = create(ollama_provider, "ollama", "llama3.2", server.ollama_base_url)
    first = await events(provider, ask("llama3.2"))
    second = await events(provider, ask("llama3.2"))
    ids = [e.call.id for e in first + second if isinstance(e, ToolCallReady)]
    assert len(ids) == len(set(ids)) == 3


# -- 11. dated ids ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-20250514", "claude-sonnet-4-0"),
        ("claude-opus-4-20250514", "claude-opus-4-0"),
        ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-5-2025-08-07", "gpt-5"),
    ],
)
def test_dated_ids_resolve_to_their_family(model, family) -> None:
    entry = catalog.lookup(model)
    assert entry is not None and entry.id == family
    assert catalog.cost_usd(model, Usage(input_tokens=1_000_000)) > 0


# -- 9. image order ----------------------------------------------------------------------------


def test_image_before_text_keeps_its_place() -> None:
    message = Message("user", [ImagePart(PNG), TextPart("what is this?")])
    wire = openai_provider.to_wire_messages("", [message])
    assert [b["type"] for b in wire[0]["content"]] == ["image_url", "text"]
    blocks = anthropic_provider.to_wire_messages([message])[0]["content"]
    assert [b["type"] for b in blocks] == ["image", "text"]

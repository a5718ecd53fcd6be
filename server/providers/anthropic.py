"""Anthropic messages API, through the official SDK: thinking, image blocks, prompt caching.

Prompt caching marks three places: the system prompt, the last tool, and the last message of
the stored history (`ModelRequest.stable_prefix`), never the per-call turn context after it.
No `temperature` or `top_p` is ever sent: the installed SDK sends `anthropic-version:
2026-10-21`, which rejects them (the option layers may still carry a temperature; it is
dropped here). The SDK is imported in `create`, so importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any

from server import background
from server.aio import run_to_end
from server.providers import images, sse
from server.providers.base import Provider, ProviderSettings
from server.providers.errors import billed_on_failure, cut_error, missing_key_error, stream_error
from server.providers.messages import (
    CallIds,
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
    settled,
)
from server.providers.sdk_errors import translated

KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_MAX_TOKENS = 8192
_CACHE = {"type": "ephemeral"}
_THINKING_BLOCKS = ("thinking", "redacted_thinking")
_ID = re.compile(r"[a-zA-Z0-9_-]+")
_NOT_ID = re.compile(r"[^a-zA-Z0-9_-]")
_STOP: dict[str, Any] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}


def create(settings: ProviderSettings) -> Provider:
    background.ready("anthropic")  # a prefetch may be importing it, and httpx2 with it
    import anthropic
    import httpx2

    name = settings.provider or "anthropic"
    try:
        client = anthropic.AsyncAnthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            max_retries=0,  # retries happen above the provider, where they can be reported
            timeout=settings.timeout,
        )
    except anthropic.AnthropicError as exc:  # e.g. an unreadable credentials profile
        raise ProviderError(f"{name}: {exc} (or set {KEY_ENV})") from exc
    if client.api_key is None and client.auth_token is None and client.credentials is None:
        raise missing_key_error(name, KEY_ENV)
    return AnthropicProvider(
        client,
        anthropic,
        name=name,
        model=settings.model,
        transport_errors=(httpx2.TransportError,),
    )


class AnthropicProvider:
    """Streams one `messages.create` call and maps its raw events to normalized stream events.

    The SDK makes the request and raises its errors; the streamed body is read as plain SSE
    (`server.providers.sse`), as the SDK would, without building its typed event objects."""

    def __init__(
        self,
        client: Any,
        sdk: Any,
        *,
        name: str,
        model: str,
        transport_errors: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.name = name
        self._client = client
        self._sdk = sdk
        self._model = model
        self._transport_errors = transport_errors

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        params = build_params(request, default_model=self._model)
        reader = _EventReader(CallIds(request.messages))
        async with billed_on_failure(self._translated(), reader):
            stream = await self._client.messages.create(**params)
            try:
                async for batch in sse.batches(stream.response.aiter_bytes()):
                    for kind, data in batch:
                        for event in reader.feed(_event(self.name, kind, data)):
                            yield event
                yield reader.finish(self.name)
            finally:
                await run_to_end(stream.close())

    async def aclose(self) -> None:
        await self._client.close()

    def _translated(self) -> AbstractAsyncContextManager[None]:
        return translated(
            self._sdk,
            self._sdk.AnthropicError,
            name=self.name,
            base_url=str(self._client.base_url),
            key_env=KEY_ENV,
            transport_errors=self._transport_errors,
        )


def build_params(request: ModelRequest, *, default_model: str = "") -> dict[str, Any]:
    """The keyword arguments for `messages.create`."""
    params: dict[str, Any] = {
        "model": request.model or default_model,
        "messages": to_wire_messages(request.messages, cache_at=request.stable_prefix),
        "stream": True,
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": _CACHE}]
    if request.tools:
        params["tools"] = to_wire_tools(request.tools)
    params.update(_options(request.options))
    return params


def to_wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    wire = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]
    wire[-1]["cache_control"] = _CACHE
    return wire


def _options(options: dict[str, Any]) -> dict[str, Any]:
    # No temperature/top_p: API version 2026-10-21, which this SDK sends, rejects them.
    # A thinking budget must stay below max_tokens; `thinking.budget` sees to that.
    out: dict[str, Any] = {"max_tokens": options.get("maxTokens") or DEFAULT_MAX_TOKENS}
    if isinstance(options.get("thinking"), dict):
        out["thinking"] = options["thinking"]
    output_config = options.get("output_config", options.get("outputConfig"))
    if isinstance(output_config, dict):
        out["output_config"] = output_config
    if isinstance(options.get("stop"), list):
        out["stop_sequences"] = options["stop"]
    return out


def to_wire_messages(
    messages: list[Message], *, cache_at: int | None = None
) -> list[dict[str, Any]]:
    """Normalized messages as alternating user/assistant messages; tool results become user.

    The last block of `messages[cache_at - 1]` (default: the last message) carries the
    conversation's cache marker."""
    converted = [
        ("assistant", _assistant_blocks(m)) if m.role == "assistant" else ("user", _user_blocks(m))
        for m in messages
    ]
    _mark_cache(converted, len(messages) if cache_at is None else cache_at)
    out: list[dict[str, Any]] = []
    for role, blocks in converted:
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    for wire in out:
        if wire["role"] == "user":  # tool results must lead their message
            wire["content"].sort(key=lambda b: b["type"] != "tool_result")
    return out


def _mark_cache(converted: list[tuple[str, list[dict[str, Any]]]], end: int) -> None:
    """Mark the last cacheable block at or before message `end - 1` (thinking cannot be)."""
    for _, blocks in reversed(converted[:end]):
        for block in reversed(blocks):
            if block["type"] not in _THINKING_BLOCKS:
                block["cache_control"] = _CACHE
                return


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    """The reply's blocks in the order they came; the API refuses thinking blocks of the latest
    reply that were dropped, moved or changed."""
    blocks = [_assistant_block(p) for p in message.parts]
    return [b for b in blocks if b is not None]


def _assistant_block(part: Part) -> dict[str, Any] | None:
    if isinstance(part, ThinkingPart):
        if part.raw is not None:
            return dict(part.raw) if part.raw.get("type") in _THINKING_BLOCKS else None
        if not part.signature:
            return None  # unsigned thinking (another provider's) cannot be sent
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, TextPart):
        # A reply may hold a whitespace-only text block (around adaptive thinking): the API
        # refuses it back ("text content blocks must contain non-whitespace text").
        return _user_block(part) if part.text.strip() else None
    if isinstance(part, ToolCallPart):
        return {
            "type": "tool_use",
            "id": wire_id(part.id),
            "name": part.name,
            "input": part.arguments,
        }
    return None


def wire_id(call_id: str) -> str:
    """A tool call id as the API takes it (letters, digits, `_`, `-`): another provider's
    (Kimi's `functions.read_file:0`) is spelt that way, with a hash of the original so two ids
    never become one; its result is given the same id."""
    if _ID.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:8]
    return f"{_NOT_ID.sub('_', call_id)}_{digest}"


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    return [
        _user_block(p)
        for p in message.parts
        if not isinstance(p, ThinkingPart | ToolCallPart)
        and not (isinstance(p, TextPart) and not p.text)
    ]


def _user_block(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return images.anthropic_block(part)
    if isinstance(part, ToolResultPart):
        return {
            "type": "tool_result",
            "tool_use_id": wire_id(part.tool_call_id),
            "content": _tool_content(part),
            "is_error": part.is_error,
        }
    raise TypeError(f"cannot send {part.kind} in a user message")


def _tool_content(part: ToolResultPart) -> str | list[dict[str, Any]]:
    """The result's text, or text and image blocks when the tool returned images."""
    if not part.images:
        return part.content
    return [{"type": "text", "text": part.content}] + [
        images.anthropic_block(i) for i in part.images
    ]


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool input as a dict; anything unparseable is kept as `{"_raw": raw}`."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def _event(name: str, kind: str | None, data: str) -> dict[str, Any]:
    """One SSE event as the SDK reads it: `ping` and unnamed events are skipped (an empty
    dict), `error` raises as the error reported inside the stream."""
    if kind == "error":
        try:
            body: Any = json.loads(data)
        except ValueError:
            raise stream_error(name, data, data) from None
        raise stream_error(name, body, f"{body}")
    if kind is None or kind == "ping":
        return {}
    value = json.loads(data)
    return value if isinstance(value, dict) else {}


class _EventReader:
    """Turns raw message stream events into normalized events."""

    def __init__(self, ids: CallIds) -> None:
        self.ids = ids
        self.calls = 0
        self.tools: dict[int, tuple[str, str, list[str]]] = {}
        self.stop_reason: str | None = None
        self.stopped = False
        self.usage = Usage()

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event["index"], event["delta"])
        if kind == "message_stop":
            self.stopped = True
        elif kind == "message_start":
            self._update_usage(event["message"].get("usage"))
        elif kind == "content_block_start":
            block = event["content_block"]
            if block["type"] == "tool_use":
                start = json.dumps(block["input"]) if block.get("input") else ""
                self.tools[event["index"]] = (block["id"], block["name"], [start] if start else [])
            elif block["type"] == "redacted_thinking":
                return [ThinkingDelta("", raw={"type": block["type"], "data": block["data"]})]
        elif kind == "content_block_stop" and event["index"] in self.tools:
            call_id, name, pieces = self.tools.pop(event["index"])
            self.calls += 1
            arguments = parse_arguments("".join(pieces))
            call = ToolCallPart(id=self.ids.claim(call_id), name=name, arguments=arguments)
            return [ToolCallReady(call)]
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason") or self.stop_reason
            self._update_usage(event.get("usage"))
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[StreamEvent]:
        kind = delta["type"]
        if kind == "text_delta":
            return [TextDelta(delta["text"])]
        if kind == "thinking_delta":
            return [ThinkingDelta(delta["thinking"])]
        if kind == "signature_delta":
            return [ThinkingDelta("", signature=delta["signature"])]
        if kind == "input_json_delta" and index in self.tools:
            self.tools[index][2].append(delta["partial_json"])
        return []

    def _update_usage(self, usage: dict[str, Any] | None) -> None:
        fields = (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read_input_tokens", "cache_read_tokens"),
            ("cache_creation_input_tokens", "cache_write_tokens"),
        )
        for theirs, ours in fields:
            value = (usage or {}).get(theirs)
            if value is not None:
                setattr(self.usage, ours, value)

    def finish(self, name: str) -> Finish:
        if not self.stopped:
            raise cut_error(name)
        reason = _STOP.get(self.stop_reason or "", "other")
        return Finish(settled(reason, calls=self.calls > 0), self.usage)

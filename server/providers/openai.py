"""OpenAI chat completions, through the official SDK.

Also serves OpenAI-compatible endpoints (DeepSeek, Volcengine, Qwen, Moonshot, OpenRouter,
Ollama's `/v1`) via `base_url`. The SDK is imported in `create`, so importing this module is cheap.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from server import background
from server.aio import run_to_end
from server.providers import images, sse
from server.providers.base import Provider, ProviderSettings
from server.providers.catalog import fixed_temperature, normalize
from server.providers.errors import billed_on_failure, cut_error, missing_key_error, stream_error
from server.providers.messages import (
    CallIds,
    Finish,
    ImagePart,
    Message,
    ModelRequest,
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

KEY_ENV = "OPENAI_API_KEY"
# These models reject `max_tokens` and sampling parameters.
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")
_FINISH: dict[str, Any] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_PASS_THROUGH = {"stop": "stop", "seed": "seed", "reasoningEffort": "reasoning_effort"}


def create(settings: ProviderSettings) -> Provider:
    import ssl

    background.ready("openai")  # a prefetch may be importing it, and httpx2 with it
    import httpx2
    import openai

    name = settings.provider or "openai"
    key_env = _key_env(name)
    api_key = settings.api_key or os.environ.get(key_env)
    if not api_key:
        if not settings.base_url:
            raise missing_key_error(name, key_env)
        api_key = "unused"  # local servers (Ollama, vLLM, llama.cpp) ignore the key
    client = openai.AsyncOpenAI(
        api_key=api_key,
        base_url=settings.base_url,
        max_retries=0,  # retries happen above the provider, where they can be reported
        timeout=settings.timeout,
    )
    return OpenAIProvider(
        client,
        openai,
        name=name,
        model=settings.model,
        transport_errors=(httpx2.TransportError,),
        timeout_errors=(httpx2.TimeoutException,),
        read_errors=(httpx2.RequestError, ssl.SSLError, anyio.EndOfStream),
    )


def _key_env(name: str) -> str:
    from server.providers.registry import PROVIDERS

    info = PROVIDERS.get(name)
    return (info.key_env if info else None) or KEY_ENV


class OpenAIProvider:
    """Streams one chat completion per call and maps it to normalized stream events."""

    def __init__(
        self,
        client: Any,
        sdk: Any,
        *,
        name: str,
        model: str,
        transport_errors: tuple[type[BaseException], ...] = (),
        timeout_errors: tuple[type[BaseException], ...] = (),
        read_errors: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.name = name
        self._client = client
        self._sdk = sdk
        self._model = model
        self._transport_errors = transport_errors
        self._timeout_errors = timeout_errors
        self._read_errors = read_errors

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        params = build_params(request, default_model=self._model, provider=self.name)
        reader = _ChunkReader(CallIds(request.messages))
        async with billed_on_failure(self._translated(), reader):
            stream = await self._client.chat.completions.create(**params)
            try:
                async for events in self._read(stream.response, reader):
                    for event in events:
                        yield event
                for event in reader.finish(self.name, done=reader.done):
                    yield event
            finally:
                await run_to_end(stream.close())

    async def _read(self, response: Any, reader: _ChunkReader) -> AsyncIterator[list[StreamEvent]]:
        """The streamed body as plain SSE (`server.providers.sse`), read as the SDK reads it
        but without building a typed chunk object per event; the SDK still made the request
        and raised its errors. A read failure becomes the SDK's connection or timeout error."""
        body = response.aiter_bytes()
        try:
            async for batch in sse.batches(body):
                events: list[StreamEvent] = []
                for _, data in batch:
                    if data.startswith("[DONE]"):
                        reader.done = True
                        break
                    events += reader.feed(self._chunk(data, reader))
                    if reader.done:
                        break
                if events:
                    yield events
                if reader.done:
                    break
        except self._timeout_errors as exc:
            raise self._sdk.APITimeoutError(request=response.request) from exc
        except self._read_errors as exc:
            raise self._sdk.APIConnectionError(request=response.request) from exc
        if reader.done:
            await _drain(body)

    def _chunk(self, data: str, reader: _ChunkReader) -> dict[str, Any]:
        """One chunk; an `error` in it is the error reported inside the stream, except after
        `finish_reason: length` (OpenRouter may send one then: the reply is complete up to
        max_tokens, so it ends as a max_tokens stop)."""
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            return {}
        error = chunk.get("error")
        if not error:
            return chunk
        if reader.finish_reason == "length":
            reader.done = True
            return {}
        message = error.get("message") if isinstance(error, dict) else None
        if not message or not isinstance(message, str):
            message = "An error occurred during streaming"
        raise stream_error(self.name, error, message)

    async def aclose(self) -> None:
        await self._client.close()

    def _translated(self) -> AbstractAsyncContextManager[None]:
        return translated(
            self._sdk,
            self._sdk.OpenAIError,
            name=self.name,
            base_url=str(self._client.base_url),
            key_env=_key_env(self.name),
            transport_errors=self._transport_errors,
        )


def build_params(
    request: ModelRequest, *, default_model: str = "", provider: str = "openai"
) -> dict[str, Any]:
    """The keyword arguments for `chat.completions.create`."""
    model = request.model or default_model
    reasoning = reasoning_field(provider, model)
    params: dict[str, Any] = {
        "model": model,
        "messages": to_wire_messages(request.system, request.messages, reasoning=reasoning),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        params["tools"] = [_tool(t) for t in request.tools]
    params.update(_options(model, request.options))
    return params


def _tool(tool: ToolSpec) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def _options(model: str, options: dict[str, Any]) -> dict[str, Any]:
    reasoning = bool(_REASONING_MODEL.match(model.rsplit("/", 1)[-1]))
    out: dict[str, Any] = {}
    if options.get("maxTokens") is not None:
        out["max_completion_tokens" if reasoning else "max_tokens"] = options["maxTokens"]
    if not reasoning:
        for ours, theirs in (("temperature", "temperature"), ("topP", "top_p")):
            if options.get(ours) is not None:
                out[theirs] = options[ours]
    fixed = fixed_temperature(model)
    if fixed is not None and "temperature" in out:
        out["temperature"] = fixed  # a configured value would be refused
    for ours, theirs in _PASS_THROUGH.items():
        if options.get(ours) is not None:
            out[theirs] = options[ours]
    effort = (options.get("reasoning") or {}).get("effort")
    if effort is not None and "reasoning_effort" not in out:
        out["reasoning_effort"] = effort
    if isinstance(options.get("extraBody"), dict):
        out["extra_body"] = options["extraBody"]
    return out


TOOL_IMAGES = "Images returned by tool calls:"


def reasoning_field(provider: str, model: str) -> str | None:
    """Where an assistant message carries its reasoning back: DeepSeek and Kimi want
    `reasoning_content` (they refuse a tool-call message without it), OpenRouter its
    `reasoning_details` as received; everyone else gets none (OpenAI refuses unknown fields)."""
    if provider == "openrouter":
        return "reasoning_details"
    if provider in ("deepseek", "moonshot") or normalize(model).startswith(("deepseek", "kimi")):
        return "reasoning_content"
    return None


def to_wire_messages(
    system: str, messages: list[Message], *, reasoning: str | None = None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            out.append(_assistant(message, reasoning))
            continue
        results = [p for p in message.parts if isinstance(p, ToolResultPart)]
        for part in results:
            out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.content})
        returned = [i for part in results for i in part.images]
        if returned:  # tool messages carry text only; their images follow as a user message
            blocks = [images.openai_block(i) for i in returned]
            out.append(
                {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES}, *blocks]}
            )
        content = _user_content(message)
        if content:
            out.append({"role": "user", "content": content})
    return out


def _assistant(message: Message, reasoning: str | None = None) -> dict[str, Any]:
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
        }
        for c in message.tool_calls
    ]
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or (None if calls else "")}
    if calls:
        wire["tool_calls"] = calls
    thoughts = [p for p in message.parts if isinstance(p, ThinkingPart)]
    if reasoning == "reasoning_content":
        text = "".join(p.text for p in thoughts if p.raw is None)
        if text or calls:
            wire["reasoning_content"] = text
    elif reasoning == "reasoning_details":
        details = [p.raw for p in thoughts if p.raw and _is_detail(p.raw)]
        if details:
            wire["reasoning_details"] = details
    return wire


def _is_detail(raw: dict[str, Any]) -> bool:
    return str(raw.get("type", "")).startswith("reasoning.")


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    parts = [p for p in message.parts if isinstance(p, TextPart | ImagePart)]
    if all(isinstance(p, TextPart) for p in parts):
        return "\n\n".join(p.text for p in parts if isinstance(p, TextPart))
    return [
        {"type": "text", "text": p.text} if isinstance(p, TextPart) else images.openai_block(p)
        for p in parts
    ]


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool arguments as a dict; anything unparseable is kept as `{"_raw": raw}`."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


async def _drain(body: AsyncIterator[bytes]) -> None:
    """Read what follows `[DONE]` (the chunked body's end) so the connection can be reused;
    a server still sending after 0.1 s is left to the close."""
    with anyio.move_on_after(0.1):
        async for _ in body:
            pass


class _ChunkReader:
    """Turns chat.completion.chunk objects into events; tool calls complete at the end."""

    def __init__(self, ids: CallIds) -> None:
        self.ids = ids
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()
        self.details: dict[int, dict[str, Any]] = {}
        self.done = False
        """The stream ended with `data: [DONE]`."""

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        if chunk.get("usage") is not None:
            self.usage = _usage(chunk["usage"])
        choices = chunk.get("choices")
        if not choices:
            return []
        choice = choices[0]
        delta = choice.get("delta") or {}
        events: list[StreamEvent] = []
        reasoning = _reasoning(delta)
        if reasoning:
            events.append(ThinkingDelta(reasoning))
        if "reasoning_details" in delta:
            self._add_details(delta["reasoning_details"])
        if delta.get("content"):
            events.append(TextDelta(delta["content"]))
        for fragment in delta.get("tool_calls") or []:
            self._add_fragment(fragment)
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        return events

    def _add_details(self, details: Any) -> None:
        """OpenRouter streams each reasoning detail in pieces under its `index`."""
        for piece in details if isinstance(details, list) else []:
            if not isinstance(piece, dict):
                continue
            detail = self.details.setdefault(piece.get("index", len(self.details)), {})
            for key, value in piece.items():
                if key in ("text", "summary", "data") and isinstance(value, str):
                    detail[key] = detail.get(key, "") + value
                elif value not in (None, ""):
                    detail[key] = value

    def _add_fragment(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        call = self.calls.setdefault(
            len(self.calls) if index is None else index, {"id": "", "name": "", "arguments": ""}
        )
        call["id"] = call["id"] or fragment.get("id") or ""
        function = fragment.get("function")
        if function is not None:
            call["name"] = call["name"] or function.get("name") or ""
            call["arguments"] += function.get("arguments") or ""

    def finish(self, name: str, *, done: bool = False) -> list[StreamEvent]:
        """`done`: the stream ended with `data: [DONE]`; without a finish reason (OpenRouter
        sends none at times) that is still a finished reply, where an ending without both is a
        cut stream."""
        if self.finish_reason is None and not done:
            raise cut_error(name)
        self.finish_reason = self.finish_reason or "stop"
        events: list[StreamEvent] = [
            ThinkingDelta("", raw=detail) for _, detail in sorted(self.details.items())
        ]
        events += [
            ToolCallReady(
                ToolCallPart(
                    id=self.ids.claim(c["id"]),
                    name=c["name"],
                    arguments=parse_arguments(c["arguments"]),
                )
            )
            for index, c in sorted(self.calls.items())
        ]
        reason = _FINISH.get(self.finish_reason or "", "other")
        events.append(Finish(settled(reason, calls=bool(self.calls)), self.usage))
        return events


def _reasoning(delta: dict[str, Any]) -> str | None:
    for key in ("reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str):
            return delta[key]
    return None


def _usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details")
    cached = (details.get("cached_tokens") if isinstance(details, dict) else None) or 0
    cached = cached or usage.get("prompt_cache_hit_tokens") or 0
    prompt = usage.get("prompt_tokens") or 0
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=usage.get("completion_tokens") or 0,
        cache_read_tokens=cached,
    )

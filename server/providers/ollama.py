"""Ollama's native chat API (`POST /api/chat`): streamed NDJSON, tools, images as bare base64.

Talks plain `httpx`; imported lazily in `create`. (Ollama's OpenAI-compatible `/v1` is also
reachable through the `openai` provider with a base URL.)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from server.providers import images
from server.providers.base import Provider, ProviderSettings
from server.providers.errors import (
    connection_error,
    cut_error,
    status_error,
    stream_error,
    timeout_error,
)
from server.providers.messages import (
    CallIds,
    Finish,
    FinishReason,
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
    Usage,
)

DEFAULT_BASE_URL = "http://127.0.0.1:11434"
# our option name -> Ollama `options` name
_OPTIONS = {
    "maxTokens": "num_predict",
    "temperature": "temperature",
    "topP": "top_p",
    "stop": "stop",
    "seed": "seed",
    "numCtx": "num_ctx",
}
_FINISH: dict[str, FinishReason] = {"stop": "end_turn", "length": "max_tokens"}


def create(settings: ProviderSettings) -> Provider:
    import httpx

    headers = {"authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    client = httpx.AsyncClient(
        base_url=(settings.base_url or DEFAULT_BASE_URL).rstrip("/"),
        headers=headers,
        timeout=httpx.Timeout(settings.timeout, connect=10),
    )
    return OllamaProvider(client, httpx, name=settings.provider or "ollama", model=settings.model)


class OllamaProvider:
    """Streams one `/api/chat` call and maps its NDJSON lines to normalized events."""

    def __init__(self, client: Any, http: Any, *, name: str, model: str) -> None:
        self.name = name
        self._client = client
        self._http = http
        self._model = model

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = build_body(request, default_model=self._model)
        async with (
            self._translated_errors(),
            self._client.stream("POST", "/api/chat", json=body) as response,
        ):
            if response.status_code >= 400:
                await response.aread()
                raise status_error(
                    self.name,
                    response.status_code,
                    _json_or_text(response.text),
                    key_env="OLLAMA_HOST",
                    headers=response.headers,
                )
            reader = _LineReader(self.name, CallIds(request.messages))
            async for line in response.aiter_lines():
                for event in reader.feed(line):
                    yield event
            yield reader.finish()

    async def aclose(self) -> None:
        await self._client.aclose()

    @asynccontextmanager
    async def _translated_errors(self) -> AsyncIterator[None]:
        http, base_url = self._http, str(self._client.base_url)
        try:
            yield
        except http.TimeoutException as exc:
            raise timeout_error(self.name, base_url) from exc
        except (http.ConnectError, http.ConnectTimeout) as exc:
            raise connection_error(self.name, base_url, exc) from exc
        except http.TransportError as exc:
            raise cut_error(self.name, exc) from exc
        except http.HTTPError as exc:
            raise ProviderError(f"{self.name}: {exc}") from exc


def _json_or_text(text: str) -> object:
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return {"message": body["error"]}
    return body


def build_body(request: ModelRequest, *, default_model: str = "") -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model or default_model,
        "messages": to_wire_messages(request.system, request.messages),
        "stream": True,
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    options = {
        theirs: request.options[ours]
        for ours, theirs in _OPTIONS.items()
        if request.options.get(ours) is not None
    }
    if options:
        body["options"] = options
    return body


def to_wire_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            out.append(_assistant(message))
            continue
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                tool: dict[str, Any] = {
                    "role": "tool",
                    "content": part.content,
                    "tool_name": part.name,
                }
                if part.images:
                    tool["images"] = images.ollama_images(list(part.images))
                out.append(tool)
        text = "\n\n".join(p.text for p in message.parts if isinstance(p, TextPart) and p.text)
        pictures = images.ollama_images(message.parts)
        if text or pictures:
            wire: dict[str, Any] = {"role": "user", "content": text}
            if pictures:
                wire["images"] = pictures
            out.append(wire)
    return out


def _assistant(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": message.text}
    thinking = "".join(p.text for p in message.parts if isinstance(p, ThinkingPart) and not p.raw)
    if thinking:
        wire["thinking"] = thinking
    if message.tool_calls:
        wire["tool_calls"] = [
            {"function": {"name": c.name, "arguments": c.arguments}} for c in message.tool_calls
        ]
    return wire


class _LineReader:
    """One NDJSON line at a time; tool calls arrive whole, usage with the final `done` line."""

    def __init__(self, name: str, ids: CallIds) -> None:
        self.name = name
        self.ids = ids
        self.calls = 0
        self.done: dict[str, Any] | None = None

    def feed(self, line: str) -> list[StreamEvent]:
        if not line.strip():
            return []
        try:
            chunk = json.loads(line)
        except ValueError as exc:
            raise ProviderError(f"{self.name}: unreadable stream line: {line[:200]}") from exc
        if "error" in chunk:
            raise stream_error(self.name, {"message": str(chunk["error"])}, "stream error")
        message = chunk.get("message") or {}
        events: list[StreamEvent] = []
        if message.get("thinking"):
            events.append(ThinkingDelta(message["thinking"]))
        if message.get("content"):
            events.append(TextDelta(message["content"]))
        for call in message.get("tool_calls") or []:
            events.append(ToolCallReady(self._call(call)))
        if chunk.get("done"):
            self.done = chunk
        return events

    def _call(self, call: dict[str, Any]) -> ToolCallPart:
        self.calls += 1
        function = call.get("function") or {}
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            from server.providers.openai import parse_arguments

            arguments = parse_arguments(arguments)
        return ToolCallPart(self.ids.claim(call.get("id")), function.get("name", ""), arguments)

    def finish(self) -> Finish:
        if self.done is None:
            raise cut_error(self.name)
        usage = Usage(
            input_tokens=self.done.get("prompt_eval_count") or 0,
            output_tokens=self.done.get("eval_count") or 0,
        )
        if self.calls:
            return Finish("tool_use", usage)
        reason = self.done.get("done_reason") or "stop"
        return Finish(_FINISH.get(reason, "other"), usage)

"""A deterministic model for tests and demos.

`ScriptedProvider(fn)` asks a plain function for the next reply given the request;
`ScriptedProvider.from_replies([...])` plays a list in order. Replies stream word by word, so
the agent loop sees the same events a real provider produces.

From the command line: `--provider scripted` plays the JSON list in `AGENTLS_SCRIPT` (a file's
path, or the JSON itself) from its start in every session; without a script it echoes the last
user message. The format is in protocol/README.md ("Scripted model").
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from server.providers.base import ProviderSettings
from server.providers.messages import (
    Finish,
    FinishReason,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallPart,
    ToolCallReady,
    Usage,
    is_turn_context,
)


@dataclass
class ScriptedReply:
    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    thinking: str = ""
    error: str = ""
    delay: float = 0.0
    """Seconds to wait before each streamed chunk."""
    usage: Usage = field(default_factory=lambda: Usage(10, 5))

    @classmethod
    def from_json(cls, data: Any, where: str = "a reply") -> ScriptedReply:
        _check_keys(data, REPLY_KEYS, where)
        calls = data.get("toolCalls", [])
        if not isinstance(calls, list):
            raise ProviderError(f"scripted model: AGENTLS_SCRIPT: {where}: toolCalls is not a list")
        for i, call in enumerate(calls):
            _check_keys(call, CALL_KEYS, f"{where}, tool call {i + 1}")
            if not isinstance(call.get("name"), str):
                raise ProviderError(
                    f"scripted model: AGENTLS_SCRIPT: {where}: a tool call needs a name"
                )
        calls = [(c["name"], c.get("arguments", {})) for c in calls]
        return cls(
            text=data.get("text", ""),
            tool_calls=calls,
            thinking=data.get("thinking", ""),
            error=data.get("error", ""),
            delay=float(data.get("delay", 0.0)),
        )


REPLY_KEYS = ("text", "toolCalls", "thinking", "error", "delay")
CALL_KEYS = ("name", "arguments")


def _check_keys(data: Any, known: tuple[str, ...], where: str) -> None:
    if not isinstance(data, dict):
        raise ProviderError(f"scripted model: AGENTLS_SCRIPT: {where} is not a JSON object")
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ProviderError(
            f"scripted model: AGENTLS_SCRIPT: {where} has unknown key(s) "
            f"{', '.join(repr(k) for k in unknown)}; the keys are {', '.join(known)}"
        )


ReplyFn = Callable[[ModelRequest], ScriptedReply]


def _chunks(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


class ScriptedProvider:
    name = "scripted"

    def __init__(self, fn: ReplyFn):
        self._fn = fn
        self._calls = 0
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_replies(cls, replies: list[ScriptedReply]) -> ScriptedProvider:
        queue = list(replies)

        def next_reply(_: ModelRequest) -> ScriptedReply:
            if not queue:
                raise ProviderError("scripted model: no scripted reply left")
            return queue.pop(0)

        return cls(next_reply)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        reply = self._fn(request)
        if reply.error:
            raise ProviderError(f"scripted model: {reply.error}")
        for piece in _chunks(reply.thinking):
            await anyio.sleep(reply.delay)
            yield ThinkingDelta(piece)
        for piece in _chunks(reply.text):
            await anyio.sleep(reply.delay)
            yield TextDelta(piece)
        for name, arguments in reply.tool_calls:
            self._calls += 1
            yield ToolCallReady(ToolCallPart(f"call_{self._calls}", name, arguments))
        reason: FinishReason = "tool_use" if reply.tool_calls else "end_turn"
        yield Finish(reason, reply.usage)


def echo(request: ModelRequest) -> ScriptedReply:
    users = [m for m in request.messages if m.role == "user" and m.text]
    last = next((m for m in reversed(users) if not is_turn_context(m)), None)
    return ScriptedReply(text=f"You said: {last.text}" if last else "Hello.")


def load_script(value: str) -> list[ScriptedReply]:
    """`AGENTLS_SCRIPT`: the JSON list itself when it starts with `[`, else a file's path."""
    try:
        text = value if value.lstrip().startswith("[") else Path(value).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, json.JSONDecodeError) as exc:
        raise ProviderError(f"scripted model: cannot load AGENTLS_SCRIPT={value}: {exc}") from exc
    if not isinstance(data, list):
        raise ProviderError("scripted model: AGENTLS_SCRIPT must hold a JSON list of replies")
    return [ScriptedReply.from_json(d, f"reply {i + 1}") for i, d in enumerate(data)]


def create(settings: ProviderSettings) -> ScriptedProvider:
    """A new provider, so a new copy of the script, for every session (the registry does not
    share scripted providers)."""
    script = settings.base_url or os.environ.get("AGENTLS_SCRIPT")
    return ScriptedProvider.from_replies(load_script(script)) if script else ScriptedProvider(echo)

"""Normalized messages: what the agent keeps, independent of any provider's wire format.

A conversation is a list of `Message`s. Provider adapters map them to their wire format at one
boundary and stream back `StreamEvent`s.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

from server.redact import redact

Role = Literal["user", "assistant", "tool"]


@dataclass
class TextPart:
    text: str
    kind: Literal["text"] = "text"


@dataclass
class ImagePart:
    """An image as a data URL: `data:<mime>;base64,<data>`."""

    data_url: str
    kind: Literal["image"] = "image"
    name: str | None = field(default=None, compare=False)
    """The file it came from, for the note a text-only model gets instead."""
    seen_by: str | None = field(default=None, compare=False)
    """The model that read it (a turn's vision model)."""

    @property
    def mime_type(self) -> str:
        return self.data_url[5 : self.data_url.index(";")]

    @property
    def base64(self) -> str:
        return self.data_url.split(",", 1)[1]


@dataclass
class ThinkingPart:
    text: str
    signature: str | None = None
    kind: Literal["thinking"] = "thinking"
    raw: dict[str, Any] | None = None
    """The block exactly as the provider sent it (an Anthropic `redacted_thinking` block, an
    OpenRouter `reasoning_details` entry), returned verbatim to the API that sent it."""


@dataclass
class ToolCallPart:
    id: str
    name: str
    arguments: dict[str, Any]
    kind: Literal["tool_call"] = "tool_call"


def fresh_call_id() -> str:
    """An id for a tool call the provider sent without one (older Ollama versions): unique in
    the session, as a counter per model call is not."""
    return f"call_{uuid.uuid4().hex[:16]}"


@dataclass
class ToolResultPart:
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    kind: Literal["tool_result"] = "tool_result"
    images: list[ImagePart] = field(default_factory=list)
    """Images the tool returned, sent to the model next to `content` when it can see them."""


Part = TextPart | ImagePart | ThinkingPart | ToolCallPart | ToolResultPart


@dataclass
class Message:
    role: Role
    parts: list[Part]

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


class CallIds:
    """The tool call ids of one reply, unique in the conversation it answers. Some providers
    repeat ids (an OpenRouter route numbers every call `0`): a repeat gets a fresh id, which is
    the one its card, its result and the history sent back carry, so every result answers
    exactly one call (the APIs refuse an id answered twice)."""

    def __init__(self, history: list[Message]) -> None:
        self._taken = {
            p.id if isinstance(p, ToolCallPart) else p.tool_call_id
            for m in history
            for p in m.parts
            if isinstance(p, ToolCallPart | ToolResultPart)
        }

    def claim(self, wanted: str | None) -> str:
        call_id = wanted if wanted and wanted not in self._taken else fresh_call_id()
        self._taken.add(call_id)
        return call_id


CONTEXT_TAG = "turn-context"
"""The tag of the per-call turn context message (`server.agent.context`): sent with each model
call, never part of the history."""


def is_turn_context(message: Message) -> bool:
    return message.role == "user" and message.text.startswith(f"<{CONTEXT_TAG}>")


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass
class ModelRequest:
    model: str
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    stable_prefix: int | None = None
    """How many leading `messages` are stored history; the rest are per-call context (the turn
    context message). Prompt caching marks the end of this prefix. None: all of them."""
    instructions: str = ""
    """What the user and the project tell the model to follow (a configured prompt, the
    AGENTS.md / CLAUDE.md files, the configured append), already inside `system`; for
    providers that write a system prompt of their own."""


# Stream events a provider yields for one model call.


@dataclass
class TextDelta:
    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass
class ThinkingDelta:
    """Thinking text as it streams; a signature closes its block. With `raw`, a whole opaque
    block to keep and send back (see `ThinkingPart.raw`)."""

    text: str
    signature: str | None = None
    kind: Literal["thinking_delta"] = "thinking_delta"
    raw: dict[str, Any] | None = None


@dataclass
class ToolCallReady:
    """A complete tool call; providers emit it once the arguments have fully streamed."""

    call: ToolCallPart
    kind: Literal["tool_call"] = "tool_call"


class ReplyParts:
    """The text and thinking of one streamed reply as parts, in the order they arrived, so a
    reply of text, thinking, text goes back to the provider as three blocks in that order."""

    def __init__(self) -> None:
        self._open: list[tuple[TextPart | ThinkingPart, list[str]]] = []

    def add(self, event: TextDelta | ThinkingDelta) -> None:
        last = self._open[-1] if self._open else None
        if isinstance(event, TextDelta):
            if not event.text:
                return
            if last is not None and isinstance(last[0], TextPart):
                last[1].append(event.text)
            else:
                self._open.append((TextPart(""), [event.text]))
            return
        if event.raw is not None:
            self._open.append((ThinkingPart("", raw=event.raw), [event.text]))
        elif last is not None and _open_thinking(last[0]):
            last[1].append(event.text)
            last[0].signature = event.signature
        elif event.text or event.signature:
            self._open.append((ThinkingPart("", event.signature), [event.text]))

    def parts(self) -> list[Part]:
        out: list[Part] = []
        for part, pieces in self._open:
            part.text = "".join(pieces)
            out.append(part)
        return out


def _open_thinking(part: TextPart | ThinkingPart) -> TypeGuard[ThinkingPart]:
    return isinstance(part, ThinkingPart) and part.raw is None and part.signature is None


FinishReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


def settled(reason: FinishReason, *, calls: bool) -> FinishReason:
    """A reply's finish reason as what it holds says: services report `tool_use` for a reply
    without tool calls after a tool step (DeepSeek reasoner, Kimi), or a plain stop for one with
    them."""
    if calls and reason in ("end_turn", "other"):
        return "tool_use"
    if not calls and reason == "tool_use":
        return "end_turn"
    return reason


@dataclass
class Finish:
    reason: FinishReason
    usage: Usage
    kind: Literal["finish"] = "finish"


StreamEvent = TextDelta | ThinkingDelta | ToolCallReady | Finish


class ProviderError(Exception):
    """A model call failed. `status` is the HTTP status when there was one; `retry_after` is the
    server's requested wait in seconds (`retry-after` / `retry-after-ms` headers)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ):
        super().__init__(redact(message))  # error bodies echo keys and headers back
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.usage: Usage | None = None
        """What the failed call reported it used before it broke (billed all the same); for a
        call retried until it gave up, every attempt's."""

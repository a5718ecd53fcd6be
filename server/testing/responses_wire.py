"""The OpenAI Responses API (`POST /v1/responses`) for the loopback fake: its SSE event stream,
the response object a non-streaming call returns, and the input rules the real API enforces.

A stream opens with `response.created` and `response.in_progress`, then each output item
(reasoning, message, function call) goes `output_item.added` → its deltas → `output_item.done`,
and it closes with `response.completed` (`response.incomplete` when the token budget ran out,
`response.failed` for an in-stream error). Every event carries a `sequence_number`; there is no
`[DONE]` line. Responses made with `store` on are remembered, so `previous_response_id` works.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from server.testing.wire_rules import Refusal

PATHS = ("/v1/responses", "/responses")


class Store:
    """What `previous_response_id` may refer to: the input and output of stored responses."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, list[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def keep(self, response_id: str, items: list[dict[str, Any]]) -> None:
        with self._lock:
            self._items[response_id] = items

    def history(self, response_id: str) -> list[dict[str, Any]] | None:
        with self._lock:
            return self._items.get(response_id)


def input_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    given = body.get("input")
    if isinstance(given, str):
        return [{"type": "message", "role": "user", "content": given}]
    return [item for item in given or [] if isinstance(item, dict)]


def check(body: Any, store: Store) -> Refusal | None:
    """None when the real API would accept the request, else its 400."""
    if not isinstance(body, dict):
        return None
    if "input" not in body and not body.get("previous_response_id") and "prompt" not in body:
        return Refusal(
            "Missing required parameter: 'input'.", "input", code="missing_required_parameter"
        )
    earlier: list[dict[str, Any]] = []
    if previous := body.get("previous_response_id"):
        known = store.history(str(previous))
        if known is None:
            return Refusal(
                f"Previous response with id '{previous}' not found.",
                "previous_response_id",
                code="previous_response_not_found",
            )
        earlier = known
    return _pairing([*earlier, *input_items(body)])


def _pairing(items: list[dict[str, Any]]) -> Refusal | None:
    calls: list[str] = []
    answered: set[str] = set()
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            calls.append(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                return Refusal(
                    f"No tool call found for function call output with call_id {call_id}.",
                    "input",
                )
            answered.add(call_id)
    for call_id in calls:
        if call_id not in answered:
            return Refusal(f"No tool output found for function call {call_id}.", "input")
    return None


Pause = Callable[[], None]


class Stream:
    """Numbers the events of one response and keeps the output items as they complete."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response
        self.output: list[dict[str, Any]] = []
        self._seq = itertools.count()

    def event(self, kind: str, **fields: Any) -> str:
        data = {"type": kind, "sequence_number": next(self._seq), **fields}
        return f"event: {kind}\ndata: {json.dumps(data)}\n\n"

    def item(
        self, item: dict[str, Any], deltas: Iterator[str], done: dict[str, Any]
    ) -> Iterator[str]:
        index = len(self.output)
        yield self.event("response.output_item.added", output_index=index, item=item)
        yield from deltas
        self.output.append(done)
        yield self.event("response.output_item.done", output_index=index, item=done)

    def snapshot(self, status: str, **extra: Any) -> dict[str, Any]:
        return {**self.response, "status": status, "output": list(self.output), **extra}


def response_object(body: dict[str, Any], response_id: str) -> dict[str, Any]:
    """The response as `response.created` shows it, before any output."""
    reasoning = body.get("reasoning") or {}
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model", "fake"),
        "output": [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": None,
        "user": body.get("user"),
        "metadata": body.get("metadata") or {},
    }


def reasoning_item(
    s: Stream, item_id: str, pieces: list[str], pause: Pause, *, encrypted: str | None
) -> Iterator[str]:
    at = {"item_id": item_id, "output_index": len(s.output), "summary_index": 0}
    text = "".join(pieces)

    def deltas() -> Iterator[str]:
        yield s.event("response.reasoning_summary_part.added", **at, part=_summary(""))
        for piece in pieces:
            pause()
            yield s.event("response.reasoning_summary_text.delta", **at, delta=piece)
        yield s.event("response.reasoning_summary_text.done", **at, text=text)
        yield s.event("response.reasoning_summary_part.done", **at, part=_summary(text))

    start = {"id": item_id, "type": "reasoning", "summary": []}
    done = {**start, "summary": [_summary(text)]}
    if encrypted is not None:
        start["encrypted_content"] = done["encrypted_content"] = encrypted
    yield from s.item(start, deltas(), done)


def _summary(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def message_item(s: Stream, item_id: str, pieces: list[str], pause: Pause) -> Iterator[str]:
    at = {"item_id": item_id, "output_index": len(s.output), "content_index": 0}
    text = "".join(pieces)

    def part(value: str) -> dict[str, Any]:
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": value}

    def deltas() -> Iterator[str]:
        yield s.event("response.content_part.added", **at, part=part(""))
        for piece in pieces:
            pause()
            yield s.event("response.output_text.delta", **at, delta=piece, logprobs=[])
        yield s.event("response.output_text.done", **at, text=text, logprobs=[])
        yield s.event("response.content_part.done", **at, part=part(text))

    start = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
    done = {**start, "status": "completed", "content": [part(text)]}
    yield from s.item({**start, "content": []}, deltas(), done)


def function_call_item(
    s: Stream, item_id: str, call: tuple[str, str, list[str]], pause: Pause
) -> Iterator[str]:
    call_id, name, pieces = call
    at = {"item_id": item_id, "output_index": len(s.output)}
    arguments = "".join(pieces)

    def deltas() -> Iterator[str]:
        for piece in pieces:
            pause()
            yield s.event("response.function_call_arguments.delta", **at, delta=piece)
        yield s.event("response.function_call_arguments.done", **at, name=name, arguments=arguments)

    start = {"id": item_id, "type": "function_call", "status": "in_progress"}
    start |= {"arguments": "", "call_id": call_id, "name": name}
    yield from s.item(start, deltas(), {**start, "status": "completed", "arguments": arguments})


def usage(prompt: int, completion: int, cache: tuple[int, int], reasoning: int) -> dict[str, Any]:
    """Input tokens count the cache's reads and writes among them, as the API counts them."""
    cached, written = cache
    taken = prompt + cached + written
    return {
        "input_tokens": taken,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": taken + completion,
    }


def new_response_id() -> str:
    return "resp_" + uuid.uuid4().hex

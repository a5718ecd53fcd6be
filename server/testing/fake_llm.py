"""A loopback fake model server speaking the OpenAI (chat completions and Responses), Anthropic
and Ollama streaming formats.

Tests script replies in a FIFO queue, point a real client at `openai_base_url`,
`anthropic_base_url` or `ollama_base_url`, and assert on `requests`. It binds 127.0.0.1 only.
Like the real services it refuses (HTTP 400, their error text) a history they would refuse, e.g.
a tool call without its result (`wire_rules`); `refusals` lists what it refused.
OpenAI chat completions, Responses and Anthropic messages stream as SSE (a Responses call may
also be non-streaming); Ollama's `/api/chat` as NDJSON.

    python -m server.testing.fake_llm --port 8765 --script replies.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import select
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from server.testing import fake_rules, responses_wire, wire_rules

OPENAI_PATHS = ("/v1/chat/completions", "/chat/completions")
ANTHROPIC_PATHS = ("/v1/messages", "/messages")
OLLAMA_PATHS = ("/api/chat",)
RESPONSES_PATHS = responses_wire.PATHS

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_OPENAI_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
# A scripted `stop_reason` may use either vocabulary; it is translated for the other format.
_TO_OPENAI = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
_TO_ANTHROPIC = {v: k for k, v in _TO_OPENAI.items()}


@dataclass
class FakeToolCall:
    """A tool call the fake model makes; `id` is generated (`call_1`, `toolu_1`) when None."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


@dataclass
class Reply:
    """One scripted model reply, streamed in either wire format.

    `status` other than 200 answers an HTTP error with `error_message` in the provider's error
    shape (and a `retry-after-ms` header from `retry_after_ms`, a `retry-after` header in seconds
    from `retry_after`, so retries stay fast).
    `cache_tokens` is (cache read, cache write) input tokens reported in the usage.
    `stream_error` ends the stream after the content with an in-stream error event instead.
    `cut_after` drops the connection mid-stream after that many deltas; `drop` closes the
    connection without answering at all (a connection reset).
    `blocks` (Anthropic wire) are content blocks streamed in this order instead of `thinking`
    and `text`: `{"type": "thinking", "thinking"}`, `{"type": "redacted_thinking", "data"}`,
    `{"type": "text", "text"}`. `error_metadata` goes into an OpenAI-shaped error's `metadata`.
    A `stream_error` with a `stop_reason` (OpenAI wire) follows the finish chunk.
    `no_finish_reason` leaves the OpenAI `finish_reason` chunk out and still ends with
    `data: [DONE]` (as OpenRouter does).
    """

    text: str = ""
    thinking: str = ""
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    chunk_delay: float = 0.0
    status: int = 200
    error_message: str = ""
    usage: tuple[int, int] = (10, 5)
    stop_reason: str | None = None
    cache_tokens: tuple[int, int] = (0, 0)
    retry_after_ms: int | None = 10
    retry_after: float | None = None
    stream_error: str = ""
    cut_after: int | None = None
    drop: bool = False
    blocks: list[dict[str, Any]] = field(default_factory=list)
    error_metadata: dict[str, Any] | None = None
    no_finish_reason: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        data = dict(data)
        calls = [FakeToolCall(**c) for c in data.pop("tool_calls", [])]
        for key in ("usage", "cache_tokens"):
            if key in data:
                data[key] = tuple(data[key])
        return cls(tool_calls=calls, **data)


ReplySource = Reply | Callable[[dict[str, Any]], Reply]


@dataclass
class RecordedRequest:
    """A request the server received: path without query, lowercased headers, parsed body."""

    path: str
    headers: dict[str, str]
    body: Any


class FakeModelServer:
    """Serves scripted replies over real HTTP on 127.0.0.1 from a background thread."""

    def __init__(self, *, port: int = 0, strict: bool = True, api_key: str | None = None) -> None:
        self._port = port
        self.strict = strict
        self.api_key = api_key
        """When set, a request with another key is refused as the services refuse it: 401."""
        """Refuse histories the real services refuse (`wire_rules`), as they do: HTTP 400."""
        self.refusals: list[str] = []
        self._queue: deque[ReplySource] = deque()
        self._lock = threading.Lock()
        self._ids = {"message": itertools.count(1), "call": itertools.count(1)}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self.rules = fake_rules.Rules()
        """Refusals the real APIs answer (`server.testing.fake_rules`), chosen by model id."""
        self.responses = responses_wire.Store()
        """Responses API results made with `store` on, for `previous_response_id`."""
        self.disconnects = 0
        self.delta_times: list[float] = []
        """`time.perf_counter()` as each delta is handed to the socket (for benchmarks)."""
        self.delta_log: dict[tuple[str, int], float] = {}
        """(first word of the reply up to its first `-`, 1-based delta index) -> send time."""

    def start(self) -> FakeModelServer:
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._httpd = _Server(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def ollama_base_url(self) -> str:
        return self.base_url

    def script(self, *replies: ReplySource) -> None:
        """Append replies (or functions of the request body returning one) to the queue."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _pop(self) -> ReplySource | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def _next_id(self, kind: str) -> int:
        with self._lock:
            return next(self._ids[kind])

    def _refused(self, message: str) -> None:
        with self._lock:
            self.refusals.append(message)

    def _disconnected(self) -> None:
        with self._lock:
            self.disconnects += 1

    def _sent_delta(self, key: str = "", index: int = 0) -> None:
        now = time.perf_counter()
        with self._lock:
            self.delta_times.append(now)
            if key:
                self.delta_log[(key, index)] = now


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many sessions connect at once; the default backlog is 5
    daemon_threads = True


class _ClientGone(Exception):
    pass


class _Cut(Exception):
    pass


def _pieces(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*|\s+", text)


def _json_pieces(value: dict[str, Any]) -> list[str]:
    raw = json.dumps(value)
    size = max(1, len(raw) // 3 + 1)
    return [raw[i : i + size] for i in range(0, len(raw), size)]


_signature = fake_rules.signature


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModelServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    _deltas = 0

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:  # a client dropping an idle keep-alive connection
            pass

    def do_POST(self) -> None:
        self._deltas = 0
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake._record(RecordedRequest(path, headers, body))
        wire = _WIRES.get(path)
        if not wire:
            self._send_json(404, {"error": {"message": f"fake_llm: no route {path}"}})
            return
        if self.fake.api_key is not None and not self._key_matches(wire, headers):
            return
        reply = self._next_reply(wire, body)
        if reply is None:
            return
        try:
            if wire == "responses" and not body.get("stream"):
                self._respond_whole(_responses_events(self, reply, body))
                return
            self._stream(_EVENTS[wire](self, reply, body), wire)
        except _ClientGone:
            self.fake._disconnected()
            self.close_connection = True
        except _Cut:
            self._hang_up()

    def _key_matches(self, wire: str, headers: dict[str, str]) -> bool:
        """The key check of each service (Ollama has none), and its 401 when it fails."""
        expected = self.fake.api_key
        if wire == "anthropic":
            # The service takes the key in x-api-key or as a bearer token; the SDK here sends the
            # latter.
            bearer = headers.get("authorization", "").removeprefix("Bearer ")
            if expected in (headers.get("x-api-key"), bearer):
                return True
            self._error(wire, 401, "invalid x-api-key", retry=False)
            return False
        given = headers.get("authorization", "").removeprefix("Bearer ")
        if wire == "ollama" or given == expected:
            return True
        shown = f"{given[:3]}*****{given[-4:]}" if len(given) > 8 else given
        self._error(
            wire,
            401,
            f"Incorrect API key provided: {shown}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            retry=False,
        )
        return False

    def _next_reply(self, wire: str, body: Any) -> Reply | None:
        """The scripted reply to stream, or None once an error or a hang-up has been sent."""
        if not (
            isinstance(body, dict) and (wire == "responses" or body.get("stream", wire == "ollama"))
        ):
            self._error(wire, 400, "fake_llm: only streaming requests are supported", retry=False)
            return None
        broken = self._broken_rule(wire, body) if self.fake.strict else None
        if broken is not None:
            self.fake._refused(broken.message)
            self._error(
                wire,
                broken.status,
                broken.message,
                retry=False,
                param=broken.param,
                code=broken.code,
            )
            return None
        refusal = self.fake.rules.refusal(wire, body)
        if refusal is not None:
            self._send_json(refusal[0], refusal[1], {"x-should-retry": "false"})
            return None
        source = self.fake._pop()
        if source is None:
            self._error(wire, 500, "fake_llm: no scripted reply left", retry=False)
            return None
        try:
            reply = source(body) if callable(source) else source
        except Exception as exc:
            self._error(wire, 500, f"fake_llm: reply function failed: {exc!r}", retry=False)
            return None
        if reply.drop:
            self._hang_up()
            return None
        if reply.status != 200:
            self._error(wire, reply.status, reply.error_message, reply=reply)
            return None
        return reply

    def _broken_rule(self, wire: str, body: Any) -> wire_rules.Refusal | None:
        if wire == "responses":
            return responses_wire.check(body, self.fake.responses)
        return wire_rules.check(wire, body)

    def _respond_whole(self, events: Iterator[str]) -> None:
        """A non-streaming Responses call: the response object of the stream's last event."""
        *_, last = events
        final = json.loads(last.split("data: ", 1)[1])["response"]
        if final["status"] == "failed":
            self._error("responses", 500, final["error"]["message"], retry=False)
            return
        self._send_json(200, final)

    def _hang_up(self) -> None:
        """Close the connection abruptly: no response or no end of the chunked body."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _error(
        self,
        wire: str,
        status: int,
        message: str,
        *,
        retry: bool = True,
        reply: Reply | None = None,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        if wire == "ollama":
            payload: dict[str, Any] = {"error": message}
        elif wire in ("openai", "responses"):
            kind = "server_error" if status >= 500 else kind
            code = code or _OPENAI_CODES.get(status)
            payload = {"error": {"message": message, "type": kind, "param": param, "code": code}}
            if reply is not None and reply.error_metadata is not None:
                payload["error"]["metadata"] = reply.error_metadata
        else:
            payload = {"type": "error", "error": {"type": kind, "message": message}}
        extra = {} if retry else {"x-should-retry": "false"}
        if reply is not None and reply.retry_after_ms is not None:
            extra["retry-after-ms"] = str(reply.retry_after_ms)
        if reply is not None and reply.retry_after is not None:
            extra["retry-after"] = f"{reply.retry_after:g}"
        self._send_json(status, payload, extra)

    def _send_json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: Iterator[str], wire: str) -> None:
        self.send_response(200)
        kind = "application/x-ndjson" if wire == "ollama" else "text/event-stream"
        self.send_header("content-type", kind)
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in events:
            self._write(event.encode())
        self._write(b"")

    def pause(self, reply: Reply) -> None:
        """Called before each delta: cut the stream when scripted, sleep `chunk_delay` between
        deltas (the first goes out at once), raise `_ClientGone` as soon as the client leaves."""
        if reply.cut_after is not None and self._deltas >= reply.cut_after:
            raise _Cut
        self._deltas += 1
        if self._deltas > 1:
            self._sleep(reply.chunk_delay)
        self.fake._sent_delta(
            reply.text.split("-", 1)[0] if "-" in reply.text else "", self._deltas
        )

    def _sleep(self, delay: float) -> None:
        deadline = time.monotonic() + delay
        while (left := deadline - time.monotonic()) > 0:
            if self.fake._stopping.is_set():
                raise _ClientGone
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                raise _ClientGone

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise _ClientGone from exc


def _openai_events(h: _Handler, reply: Reply, body: dict[str, Any]) -> Iterator[str]:
    n = h.fake._next_id("message")
    base = {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "system_fingerprint": None,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for delta in fake_rules.reasoning_deltas(body.get("model"), _pieces(reply.thinking)):
        h.pause(reply)
        yield chunk(delta)
    for piece in _pieces(reply.text):
        h.pause(reply)
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_{h.fake._next_id('call')}"
        head = {"name": call.name, "arguments": ""}
        yield chunk(
            {"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": head}]}
        )
        for piece in _json_pieces(call.arguments):
            h.pause(reply)
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    (prompt, completion), (cached, _) = reply.usage, reply.cache_tokens
    usage = {
        "prompt_tokens": prompt + cached,
        "completion_tokens": completion,
        "total_tokens": prompt + cached + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    if reply.stream_error:
        if reply.stop_reason:  # OpenRouter's last chunk: the finish reason with the usage
            finish = json.loads(chunk({}, _TO_OPENAI.get(reply.stop_reason, reply.stop_reason))[6:])
            yield f"data: {json.dumps(finish | {'usage': usage})}\n\n"
        error = {"message": reply.stream_error, "type": "server_error", "code": None}
        yield f"data: {json.dumps({'error': error})}\n\n"
        return
    default = "tool_calls" if reply.tool_calls else "stop"
    stop = reply.stop_reason or default
    if not reply.no_finish_reason:
        yield chunk({}, _TO_OPENAI.get(stop, stop))
    if (body.get("stream_options") or {}).get("include_usage"):
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n"
    yield "data: [DONE]\n\n"


def _sse(data: dict[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


def _anthropic_events(h: _Handler, reply: Reply, body: dict[str, Any]) -> Iterator[str]:
    n = h.fake._next_id("message")
    (prompt, completion), (cache_read, cache_write) = reply.usage, reply.cache_tokens
    usage = {
        "input_tokens": prompt,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }
    message: dict[str, Any] = {"id": f"msg_{n}", "type": "message", "role": "assistant"}
    message |= {"content": [], "model": body.get("model", "fake")}
    message |= {"stop_reason": None, "stop_sequence": None}
    yield _sse({"type": "message_start", "message": {**message, "usage": usage}})
    yield _sse({"type": "ping"})
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    content = reply.blocks or [
        *([{"type": "thinking", "thinking": reply.thinking}] if reply.thinking else []),
        *([{"type": "text", "text": reply.text}] if reply.text else []),
    ]
    sent: list[dict[str, Any]] = []
    for block in content:
        if block["type"] == "redacted_thinking":
            blocks.append((block, []))
            sent.append(block)
        elif block["type"] == "thinking":
            deltas: list[dict[str, Any]] = [
                {"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])
            ]
            deltas.append({"type": "signature_delta", "signature": _signature(block["thinking"])})
            blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
            sent.append(block | {"signature": _signature(block["thinking"])})
        else:
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
            blocks.append(({"type": "text", "text": ""}, deltas))
            sent.append(block)
    for call in reply.tool_calls:
        start: dict[str, Any] = {"type": "tool_use"}
        start |= {"id": call.id or f"toolu_{h.fake._next_id('call')}"}
        start |= {"name": call.name, "input": {}}
        pieces = ["", *_json_pieces(call.arguments)]
        blocks.append((start, [{"type": "input_json_delta", "partial_json": p} for p in pieces]))
        sent.append(start | {"input": call.arguments})
    h.fake.rules.remember_anthropic(sent)
    for index, (start, deltas) in enumerate(blocks):
        yield _sse({"type": "content_block_start", "index": index, "content_block": start})
        for delta in deltas:
            h.pause(reply)
            yield _sse({"type": "content_block_delta", "index": index, "delta": delta})
        yield _sse({"type": "content_block_stop", "index": index})
    if reply.stream_error:
        error = {"type": "overloaded_error", "message": reply.stream_error}
        yield _sse({"type": "error", "error": error})
        return
    stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
    delta = {"stop_reason": _TO_ANTHROPIC.get(stop, stop), "stop_sequence": None}
    yield _sse({"type": "message_delta", "delta": delta, "usage": {"output_tokens": completion}})
    yield _sse({"type": "message_stop"})


def _ollama_events(h: _Handler, reply: Reply, body: dict[str, Any]) -> Iterator[str]:
    model = body.get("model", "fake")

    def line(message: dict[str, Any], **extra: Any) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        chunk = {"model": model, "created_at": stamp, "message": message, "done": False}
        return json.dumps(chunk | extra) + "\n"

    for piece in _pieces(reply.thinking):
        h.pause(reply)
        yield line({"role": "assistant", "content": "", "thinking": piece})
    for piece in _pieces(reply.text):
        h.pause(reply)
        yield line({"role": "assistant", "content": piece})
    if reply.tool_calls:
        h.pause(reply)
        calls = [{"function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls]
        yield line({"role": "assistant", "content": "", "tool_calls": calls})
    if reply.stream_error:
        yield json.dumps({"error": reply.stream_error}) + "\n"
        return
    prompt, completion = reply.usage
    reason = {"max_tokens": "length", "length": "length"}.get(reply.stop_reason or "", "stop")
    counts = {"prompt_eval_count": prompt, "eval_count": completion, "total_duration": 1000}
    yield line({"role": "assistant", "content": ""}, done=True, done_reason=reason, **counts)


def _responses_events(h: _Handler, reply: Reply, body: dict[str, Any]) -> Iterator[str]:
    wire, store = responses_wire, h.fake.responses
    n = store.next_id()
    s = wire.Stream(wire.response_object(body, wire.new_response_id()))
    yield s.event("response.created", response=s.snapshot("in_progress"))
    yield s.event("response.in_progress", response=s.snapshot("in_progress"))

    def pause() -> None:
        h.pause(reply)

    if reply.thinking:
        wanted = "reasoning.encrypted_content" in (body.get("include") or [])
        sealed = _signature(reply.thinking) if wanted else None
        yield from wire.reasoning_item(
            s, f"rs_{n}", _pieces(reply.thinking), pause, encrypted=sealed
        )
    if reply.text:
        yield from wire.message_item(s, f"msg_{n}", _pieces(reply.text), pause)
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_{h.fake._next_id('call')}"
        made = (call_id, call.name, _json_pieces(call.arguments))
        yield from wire.function_call_item(s, f"fc_{n}_{index}", made, pause)
    if reply.stream_error:
        error = {"code": "server_error", "message": reply.stream_error}
        yield s.event("response.failed", response=s.snapshot("failed", error=error))
        return
    (prompt, completion), reasoning = reply.usage, len(_pieces(reply.thinking))
    used = wire.usage(prompt, completion, reply.cache_tokens, reasoning)
    if body.get("store", True):
        earlier = store.history(str(body.get("previous_response_id"))) or []
        store.keep(s.response["id"], [*earlier, *wire.input_items(body), *s.output])
    if reply.stop_reason in ("max_tokens", "length"):
        cut = {"reason": "max_output_tokens"}
        final = s.snapshot("incomplete", usage=used, incomplete_details=cut)
        yield s.event("response.incomplete", response=final)
        return
    yield s.event("response.completed", response=s.snapshot("completed", usage=used))


_WIRES = {
    **dict.fromkeys(OPENAI_PATHS, "openai"),
    **dict.fromkeys(ANTHROPIC_PATHS, "anthropic"),
    **dict.fromkeys(OLLAMA_PATHS, "ollama"),
    **dict.fromkeys(RESPONSES_PATHS, "responses"),
}
_EVENTS: dict[str, Callable[[_Handler, Reply, dict[str, Any]], Iterator[str]]] = {
    "openai": _openai_events,
    "anthropic": _anthropic_events,
    "ollama": _ollama_events,
    "responses": _responses_events,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve scripted model replies on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file holding a list of reply objects")
    args = parser.parse_args(argv)
    server = FakeModelServer(port=args.port)
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            server.script(*(Reply.from_dict(r) for r in json.load(f)))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        try:
            done.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

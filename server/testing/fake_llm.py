"""A loopback fake model server speaking the OpenAI and Anthropic streaming wire formats.

Tests script replies in a FIFO queue, point a real SDK client at `openai_base_url` or
`anthropic_base_url`, and assert on `requests`. It binds 127.0.0.1 only.

    python -m server.testing.fake_llm --port 8765 --script replies.json
"""

from __future__ import annotations

import argparse
import hashlib
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

OPENAI_PATHS = ("/v1/chat/completions", "/chat/completions")
ANTHROPIC_PATHS = ("/v1/messages", "/messages")

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
    shape (and a `retry-after-ms` header from `retry_after_ms`, so SDK retries stay fast).
    `cache_tokens` is (cache read, cache write) input tokens reported in the usage.
    `stream_error` ends the stream after the content with an in-stream error event instead.
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
    stream_error: str = ""

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

    def __init__(self, *, port: int = 0) -> None:
        self._port = port
        self._queue: deque[ReplySource] = deque()
        self._lock = threading.Lock()
        self._ids = {"message": itertools.count(1), "call": itertools.count(1)}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0

    def start(self) -> FakeModelServer:
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
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

    def _disconnected(self) -> None:
        with self._lock:
            self.disconnects += 1


class _ClientGone(Exception):
    pass


def _pieces(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*|\s+", text)


def _json_pieces(value: dict[str, Any]) -> list[str]:
    raw = json.dumps(value)
    size = max(1, len(raw) // 3 + 1)
    return [raw[i : i + size] for i in range(0, len(raw), size)]


def _signature(thinking: str) -> str:
    return "sig_" + hashlib.sha256(thinking.encode()).hexdigest()[:16]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModelServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    _paused_before = False

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:  # a client dropping an idle keep-alive connection
            pass

    def do_POST(self) -> None:
        self._paused_before = False
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake._record(RecordedRequest(path, headers, body))
        wire = "openai" if path in OPENAI_PATHS else "anthropic" if path in ANTHROPIC_PATHS else ""
        if not wire:
            self._send_json(404, {"error": {"message": f"fake_llm: no route {path}"}})
            return
        if not isinstance(body, dict) or not body.get("stream"):
            self._error(wire, 400, "fake_llm: only streaming requests are supported", retry=False)
            return
        source = self.fake._pop()
        if source is None:
            self._error(wire, 500, "fake_llm: no scripted reply left", retry=False)
            return
        try:
            reply = source(body) if callable(source) else source
        except Exception as exc:
            self._error(wire, 500, f"fake_llm: reply function failed: {exc!r}", retry=False)
            return
        if reply.status != 200:
            self._error(wire, reply.status, reply.error_message, retry_after=reply.retry_after_ms)
            return
        make_events = _openai_events if wire == "openai" else _anthropic_events
        try:
            self._stream(make_events(self, reply, body))
        except _ClientGone:
            self.fake._disconnected()
            self.close_connection = True

    def _error(
        self,
        wire: str,
        status: int,
        message: str,
        *,
        retry: bool = True,
        retry_after: int | None = None,
    ) -> None:
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        if wire == "openai":
            kind = "server_error" if status >= 500 else kind
            code = _OPENAI_CODES.get(status)
            payload: dict[str, Any] = {"error": {"message": message, "type": kind, "code": code}}
        else:
            payload = {"type": "error", "error": {"type": kind, "message": message}}
        extra = {} if retry else {"x-should-retry": "false"}
        if retry_after is not None:
            extra["retry-after-ms"] = str(retry_after)
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

    def _stream(self, events: Iterator[str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in events:
            self._write(event.encode())
        self._write(b"")

    def pause(self, delay: float) -> None:
        """Sleep between deltas; raise `_ClientGone` as soon as the client hangs up."""
        if not self._paused_before:  # the first delta goes out at once
            self._paused_before = True
            return
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
    for piece in _pieces(reply.thinking):
        h.pause(reply.chunk_delay)
        yield chunk({"reasoning_content": piece})
    for piece in _pieces(reply.text):
        h.pause(reply.chunk_delay)
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_{h.fake._next_id('call')}"
        head = {"name": call.name, "arguments": ""}
        yield chunk(
            {"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": head}]}
        )
        for piece in _json_pieces(call.arguments):
            h.pause(reply.chunk_delay)
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    if reply.stream_error:
        error = {"message": reply.stream_error, "type": "server_error", "code": None}
        yield f"data: {json.dumps({'error': error})}\n\n"
        return
    default = "tool_calls" if reply.tool_calls else "stop"
    stop = reply.stop_reason or default
    yield chunk({}, _TO_OPENAI.get(stop, stop))
    if (body.get("stream_options") or {}).get("include_usage"):
        (prompt, completion), (cached, _) = reply.usage, reply.cache_tokens
        usage = {
            "prompt_tokens": prompt + cached,
            "completion_tokens": completion,
            "total_tokens": prompt + cached + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
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
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "content": []}
    message |= {"model": body.get("model", "fake"), "stop_reason": None, "stop_sequence": None}
    yield _sse({"type": "message_start", "message": {**message, "usage": usage}})
    yield _sse({"type": "ping"})
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if reply.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(reply.thinking)]
        deltas.append({"type": "signature_delta", "signature": _signature(reply.thinking)})
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    if reply.text:
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(reply.text)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for call in reply.tool_calls:
        start = {"type": "tool_use", "id": call.id or f"toolu_{h.fake._next_id('call')}"}
        start |= {"name": call.name, "input": {}}
        pieces = ["", *_json_pieces(call.arguments)]
        blocks.append((start, [{"type": "input_json_delta", "partial_json": p} for p in pieces]))
    for index, (start, deltas) in enumerate(blocks):
        yield _sse({"type": "content_block_start", "index": index, "content_block": start})
        for delta in deltas:
            h.pause(reply.chunk_delay)
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

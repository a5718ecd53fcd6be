"""Seeded hostile input for the three front doors, and a runner that feeds it to the real
process over stdio and then checks that a valid request is still answered.

Frames are mutations of valid ones (bytes flipped, cut, inserted; values swapped for wrong
types; deep nesting), random bytes, and for LSP framing bad headers (missing, short, long,
huge or non-numeric Content-Length). Valid frames that would start real work (a session, a
turn, shutdown) are left out: the point is input no client should send.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WRONG_VALUES: list[Any] = [None, True, 0, -1, 1.5, 10**30, "", "x", [], {}, [1], {"a": None}]

LSP_TEMPLATES: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "engines/list", "params": {}},
    {"jsonrpc": "2.0", "id": 2, "method": "models/list", "params": {"provider": "openai"}},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/prompt",
        "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]},
    },
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}},
    {"jsonrpc": "2.0", "id": 4, "result": {"outcome": {"outcome": "cancelled"}}},
    {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}},
]
ACP_TEMPLATES: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}},
    },
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "session/prompt",
        "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]},
    },
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/set_mode",
        "params": {"sessionId": "nope", "modeId": "plan"},
    },
    {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}},
]
STREAMJSON_TEMPLATES: list[dict[str, Any]] = [
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    {"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}},
    {
        "type": "control_request",
        "request_id": "r2",
        "request": {"subtype": "set_permission_mode", "mode": "plan"},
    },
    {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": "x", "response": {"behavior": "allow"}},
    },
    {"type": "keep_alive"},
]
# Methods a fuzzed but well-formed request may still call: cheap, and they change nothing.
HARMLESS = {"engines/list", "models/list", "session/prompt", "session/set_mode", "initialize"}


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy


def _deep_text(rng: random.Random) -> bytes:
    depth = rng.choice([257, 1000, 20_000, 100_000])
    opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
    inner = rng.choice([b"1", b'"Content-Length: 1"', b'"\\r\\n\\r\\n"'])
    return opener * depth + inner + closer * depth


def mutate(rng: random.Random, template: dict[str, Any]) -> bytes:
    """One hostile body derived from a valid message."""
    choice = rng.randrange(9)
    raw = json.dumps(template).encode()
    if choice == 0:  # a value of the wrong type
        path = rng.choice(_paths(template))
        return json.dumps(_replace(template, path, rng.choice(WRONG_VALUES))).encode()
    if choice == 1:  # a key dropped
        paths = [p for p in _paths(template) if p and isinstance(p[-1], str)]
        path = rng.choice(paths)
        copy = json.loads(raw)
        target = copy
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        return json.dumps(copy).encode()
    if choice == 2:  # deep nesting, alone or in a field
        text = _deep_text(rng)
        if rng.random() < 0.5:
            return text
        return raw[:-1] + b', "x": ' + text + b"}"
    if choice == 3:  # bytes flipped
        data = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if choice == 4:  # cut short
        return raw[: rng.randrange(len(raw))]
    if choice == 5:  # random bytes
        return rng.randbytes(rng.randint(1, 200))
    if choice == 6:  # not an object
        return json.dumps(rng.choice([[], [template], "s", 5, None, True, [1, 2]])).encode()
    if choice == 7:  # bytes inserted
        at = rng.randrange(len(raw))
        return raw[:at] + rng.randbytes(rng.randint(1, 8)) + raw[at:]
    return json.dumps(_replace(template, rng.choice(_paths(template)), _deep_value(rng))).encode()


def _deep_value(rng: random.Random) -> Any:
    value: Any = 1
    for _ in range(rng.choice([200, 257, 400])):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def _starts_work(body: bytes, accept: Callable[[Any], bool]) -> bool:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return accept(data)


def _rpc_does_work(data: Any) -> bool:
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return False
    method = data.get("method")
    return isinstance(method, str) and method not in HARMLESS and "id" in data


def lsp_stream(seed: int, count: int) -> bytes:
    rng = random.Random(seed)
    out = bytearray()
    for _ in range(count):
        body = mutate(rng, rng.choice(LSP_TEMPLATES))
        if _starts_work(body, _rpc_does_work):
            body = b"{"
        out += _lsp_header(rng, len(body)) + body
    return bytes(out)


def _lsp_header(rng: random.Random, length: int) -> bytes:
    choice = rng.randrange(10)
    if choice == 0:
        return b"Content-Type: application/json\r\n\r\n"
    if choice == 1:
        return b"Content-Length: %d\r\n\r\n" % (length + rng.randint(1, 64))
    if choice == 2:
        return b"Content-Length: %d\r\n\r\n" % max(0, length - rng.randint(1, 64))
    if choice == 3:
        return b"Content-Length: %d\r\n\r\n" % (64 * 1024 * 1024 + rng.randint(1, 10**9))
    if choice == 4:
        return rng.choice([b"Content-Length: x\r\n\r\n", b"Content-Length:\r\n\r\n", b"\r\n\r\n"])
    if choice == 5:
        return b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (length, length + 3)
    return b"Content-Length: %d\r\n\r\n" % length


def ndjson_lines(seed: int, count: int, templates: list[dict], does_work) -> bytes:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        body = mutate(rng, rng.choice(templates)).replace(b"\n", b" ")
        if _starts_work(body, does_work):
            body = b"{"
        lines.append(body)
    return b"\n".join(lines) + b"\n"


def _streamjson_does_work(data: Any) -> bool:
    from server.frontends.streamjson_input import UserLine, parse_line

    try:
        return isinstance(parse_line(json.dumps(data).encode()), UserLine)
    except (ValueError, RecursionError):
        return False


@dataclass
class Outcome:
    frames: int
    bytes_sent: int
    answered: bool
    exit_code: int | None
    output_lines: int


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("AGENTLS_SCRIPT", None)
    env.update(
        AGENTLS_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        HOME=str(home),
        PYTHONPATH=str(ROOT),
        AGENTLS_PROVIDER="scripted",
    )
    return env


DOORS = {
    "jsonrpc": (["serve"], lambda seed, n: lsp_stream(seed, n)),
    "acp": (["acp"], lambda seed, n: ndjson_lines(seed, n, ACP_TEMPLATES, _rpc_does_work)),
    "streamjson": (
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
        lambda seed, n: ndjson_lines(seed, n, STREAMJSON_TEMPLATES, _streamjson_does_work),
    ),
}


def final_request(door: str) -> tuple[bytes, Callable[[bytes], bool]]:
    """A valid request to send after the noise, and how to recognise its answer."""
    if door == "jsonrpc":
        body = json.dumps({"jsonrpc": "2.0", "id": "final", "method": "engines/list"}).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body, lambda out: b'"final"' in out
    if door == "acp":
        line = {
            "jsonrpc": "2.0",
            "id": "final",
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
        return json.dumps(line).encode() + b"\n", lambda out: b'"final"' in out
    line = {"type": "user", "message": {"role": "user", "content": "final"}}
    return json.dumps(line).encode() + b"\n", lambda out: b"You said: final" in out


async def feed(door: str, seed: int, count: int, home: Path, *, deadline: float = 300) -> Outcome:
    """Spawn the door, write `count` hostile frames and then a valid request, and wait (at
    most `deadline` seconds) for its answer while draining stdout."""
    args, make = DOORS[door]
    noise = make(seed, count)
    final, answered = final_request(door)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        *args,
        cwd=home,
        env=env_for(home),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None  # both are pipes
    stdin, stdout = proc.stdin, proc.stdout
    out = bytearray()
    seen = asyncio.Event()

    async def drain() -> None:
        while chunk := await stdout.read(65536):
            out.extend(chunk)
            if answered(bytes(out[-(len(chunk) + 4096) :])):
                seen.set()

    async def write() -> None:
        for at in range(0, len(noise), 65536):
            stdin.write(noise[at : at + 65536])
            await stdin.drain()
        stdin.write(final)
        await stdin.drain()

    reader = asyncio.create_task(drain())
    try:
        await asyncio.wait_for(write(), deadline)
        await asyncio.wait_for(seen.wait(), deadline)
        ok = True
    except (TimeoutError, BrokenPipeError, ConnectionResetError):
        ok = False
    try:
        stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        code = await asyncio.wait_for(proc.wait(), 30 if door == "streamjson" else 5)
    except TimeoutError:
        proc.kill()
        code = await proc.wait()
    reader.cancel()
    return Outcome(count, len(noise), ok, code, out.count(b"\n"))

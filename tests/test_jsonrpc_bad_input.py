"""Malformed input never kills `agentls serve`: each case gets the right JSON-RPC error (or a
clean resync) and the next valid request is answered. Raw bytes over real stdio."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.agent_client import RawPipe, server_env


def request(msg_id, method="engines/list", params=None):
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}


@pytest.fixture
async def pipe(tmp_path):
    pipe = await RawPipe.spawn(server_env(tmp_path))
    pipe.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"processId": None, "capabilities": {}},
        }
    )
    assert (await pipe.read())["id"] == 0
    yield pipe
    await pipe.close()


async def expect_alive(pipe: RawPipe, msg_id: int) -> None:
    pipe.send(request(msg_id))
    reply = await pipe.read()
    while reply.get("id") != msg_id:
        reply = await pipe.read()
    assert reply["result"]["engines"][0]["id"] == "native"


def error(reply):
    return reply["id"], reply["error"]["code"]


async def test_garbage_bytes_then_valid_request(pipe):
    pipe.write(b"\x00\xff garbage that is not a header\r\nmore junk\r\n")
    await expect_alive(pipe, 1)


async def test_invalid_json_is_a_parse_error(pipe):
    body = b'{"jsonrpc": "2.0", "id": 5, "method": '
    pipe.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert error(await pipe.read()) == (None, -32700)
    await expect_alive(pipe, 2)


async def test_content_length_too_short_resyncs(pipe):
    body = json.dumps(request(7)).encode()
    pipe.write(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)
    assert error(await pipe.read()) == (None, -32700)
    await expect_alive(pipe, 3)


async def test_content_length_too_long_resyncs_at_next_frame(pipe):
    body = json.dumps(request(8)).encode()
    pipe.write(b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body)
    # The overrun swallows the start of the next frame; the reader resyncs at its header.
    pipe.send(request(4))
    assert error(await pipe.read()) == (None, -32700)
    reply = await pipe.read()
    assert reply["id"] == 4 and reply["result"]["engines"][0]["id"] == "native"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ([1, 2], (None, -32600)),
        ("just a string", (None, -32600)),
        ({"id": 9, "method": "engines/list"}, (9, -32600)),
        ({"jsonrpc": "2.0", "id": 10, "method": 42}, (10, -32600)),
        ({"jsonrpc": "2.0", "id": 11, "method": "no/such_method"}, (11, -32601)),
        ({"jsonrpc": "2.0", "id": 12, "method": "session/new"}, (12, -32602)),
        ({"jsonrpc": "2.0", "id": 13, "method": "session/new", "params": {"cwd": 5}}, (13, -32602)),
        (
            {
                "jsonrpc": "2.0",
                "id": 14,
                "method": "session/prompt",
                "params": {"sessionId": "s", "prompt": [{"type": "video"}]},
            },
            (14, -32602),
        ),
    ],
)
async def test_bad_envelopes_and_params(pipe, message, expected):
    pipe.send(message)
    assert error(await pipe.read()) == expected
    await expect_alive(pipe, 100)


async def test_bad_notification_is_ignored(pipe):
    pipe.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"nope": 1}})
    pipe.send({"jsonrpc": "2.0", "method": "unknown/notification"})
    await expect_alive(pipe, 5)


async def test_exit_with_stdin_still_open_is_clean(pipe):
    pipe.send({"jsonrpc": "2.0", "id": 50, "method": "shutdown"})
    assert (await pipe.read())["id"] == 50
    pipe.send({"jsonrpc": "2.0", "method": "exit"})
    assert await asyncio.wait_for(pipe.proc.wait(), 60) == 0


# -- hostile frames (each one stopped or wedged the reader once) -----------------------------



def framed(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


async def next_reply(pipe: RawPipe) -> dict:
    reply = await pipe.read()
    while "id" not in reply:
        reply = await pipe.read()
    return reply


@pytest.mark.parametrize("depth", [300, 5000, 200_000])
async def test_deep_nesting_is_a_parse_error(pipe, depth):
    body = b"[" * depth + b'"Content-Length: 1"' + b"]" * depth
    pipe.write(framed(body))
    assert error(await next_reply(pipe)) == (None, -32700)
    await expect_alive(pipe, 20)


async def test_deep_params_in_a_valid_request_are_a_parse_error(pipe):
    params = b'{"cwd": ' + b'{"a": ' * 400 + b"1" + b"}" * 400 + b"}"
    body = b'{"jsonrpc": "2.0", "id": 21, "method": "session/new", "params": ' + params + b"}"
    pipe.write(framed(body))
    assert error(await next_reply(pipe)) == (None, -32700)
    await expect_alive(pipe, 22)


async def test_header_block_without_content_length_resyncs(pipe):
    body = json.dumps(request(30)).encode()
    pipe.write(b"Content-Type: application/json\r\n\r\n" + body)
    pipe.send(request(31))
    assert error(await next_reply(pipe)) == (None, -32700)
    reply = await next_reply(pipe)
    assert reply["id"] == 31 and reply["result"]["engines"][0]["id"] == "native"


@pytest.mark.parametrize("extra", [1, 3, 7])
async def test_content_length_a_few_bytes_too_large_resyncs(pipe, extra):
    body = json.dumps(request(40)).encode()
    pipe.write(framed(body, len(body) + extra))
    pipe.send(request(41))
    assert error(await next_reply(pipe)) == (None, -32700)
    reply = await next_reply(pipe)
    assert reply["id"] == 41 and reply["result"]["engines"][0]["id"] == "native"


async def test_content_length_too_large_on_a_lone_frame_is_still_answered(pipe):
    body = json.dumps(request(42)).encode()
    pipe.write(framed(body, len(body) + 2))
    reply = await next_reply(pipe)
    assert reply["id"] == 42 and reply["result"]["engines"][0]["id"] == "native"
    await expect_alive(pipe, 43)


@pytest.mark.parametrize("method", ["session/cancel", "initialized", "$/cancelRequest", "exit"])
async def test_notification_names_sent_as_requests_get_an_error(pipe, method):
    pipe.send({"jsonrpc": "2.0", "id": 60, "method": method, "params": {"sessionId": "s"}})
    assert error(await next_reply(pipe)) == (60, -32600)
    await expect_alive(pipe, 61)

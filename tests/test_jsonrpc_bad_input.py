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
    assert await asyncio.wait_for(pipe.proc.wait(), 10) == 0

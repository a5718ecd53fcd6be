"""Hostile NDJSON lines never stop `agentls acp`: each gets a JSON-RPC error (id null when it
has none) and the next valid request is answered. Real process, raw bytes over real stdio."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from tests.agent_client import server_env

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}
DEEP = 100_000


class LinePipe:
    """NDJSON in, NDJSON out."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc

    @classmethod
    async def spawn(cls, env, *args: str) -> LinePipe:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.cli",
            *args,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
        )
        return cls(proc)

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)

    def send(self, message) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    async def read(self, timeout: float = 180) -> dict:
        # generous: the first line waits for a cold start on a machine that may be loaded
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert line, "the process closed stdout"
        return json.loads(line)

    async def reply(self, msg_id) -> dict:
        message = await self.read()
        while message.get("id") != msg_id or "method" in message:
            message = await self.read()
        return message

    async def close(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()


@pytest.fixture
async def pipe(tmp_path):
    pipe = await LinePipe.spawn(server_env(tmp_path), "acp")
    yield pipe
    await pipe.close()


async def expect_alive(pipe: LinePipe, msg_id: int = 1) -> None:
    pipe.send({**INITIALIZE, "id": msg_id})
    reply = await pipe.reply(msg_id)
    assert reply["result"]["protocolVersion"] == 1


@pytest.mark.parametrize(
    "line",
    [b"[]", b'"s"', b"5", b"null", b"true", b"[" + json.dumps(INITIALIZE).encode() + b"]"],
    ids=["empty array", "string", "number", "null", "true", "batch"],
)
async def test_a_line_that_is_not_an_object_is_an_invalid_request(pipe, line):
    pipe.write(line + b"\n")
    reply = await pipe.read()
    assert (reply["id"], reply["error"]["code"]) == (None, -32600)
    await expect_alive(pipe, 2)


@pytest.mark.parametrize(
    "line",
    [b"{not json", b"[" * DEEP + b"]" * DEEP, b'{"a": ' * 300 + b"1" + b"}" * 300],
    ids=["broken", "deep array", "deep object"],
)
async def test_an_unparseable_line_is_a_parse_error(pipe, line):
    pipe.write(line + b"\n")
    reply = await pipe.read()
    assert (reply["id"], reply["error"]["code"]) == (None, -32700)
    await expect_alive(pipe, 3)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 9, "method": 5}, (9, -32600)),
        ({"jsonrpc": "2.0", "id": [1], "method": "initialize"}, (None, -32600)),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}, (None, -32600)),
        ({"id": 10, "method": "initialize", "params": {}}, (10, -32600)),
        ({"jsonrpc": "2.0", "id": 11, "method": "session/cancel", "params": {}}, (11, -32600)),
    ],
    ids=["method is a number", "id is a list", "response id is an object", "no jsonrpc", "cancel"],
)
async def test_bad_envelopes_get_an_error(pipe, message, expected):
    pipe.send(message)
    reply = await pipe.read()
    assert (reply["id"], reply["error"]["code"]) == expected
    await expect_alive(pipe, 4)

"""The Python client against a scripted peer on a socket pair: typed updates (unknown kinds
passed through), typed errors, interaction handlers. End to end: tests/test_e2e_client.py."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import protocol.client as client_module
from protocol.client import (
    ERROR_CLASSES,
    AgentMessageChunk,
    AskQuestionResult,
    Client,
    ConnectionClosed,
    PromptResult,
    ProtocolVersionError,
    RpcError,
    StepFinish,
    UnknownUpdate,
    allow_once,
    parse_update,
)
from protocol.client._connection import encode, read_message
from protocol.errors import ERROR_CODES
from protocol.methods import PROTOCOL_VERSION
from protocol.updates import SessionUpdateKind, Usage

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL_FIXTURES = ROOT / "protocol" / "fixtures"
UPDATE_FIXTURES = sorted(PROTOCOL_FIXTURES.glob("update_*.json"))
FORWARD_FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("update_*.json"))
VARIANTS = SessionUpdateKind.__origin__.__args__


def load(path: Path) -> dict:
    return json.loads(path.read_text())


# -- a scripted peer --------------------------------------------------------------------------


class Peer:
    """The server end of a socket pair; each test plays the server's frames by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer

    async def read(self) -> dict:
        message = await asyncio.wait_for(read_message(self.reader), 60)
        assert message is not None, "the client closed the connection"
        return message

    async def expect(self, method: str) -> dict:
        message = await self.read()
        assert message.get("method") == method, message
        return message

    def send(self, message: dict) -> None:
        self.writer.write(encode({"jsonrpc": "2.0", **message}))

    async def answer_initialize(self, version: int = PROTOCOL_VERSION) -> None:
        request = await self.expect("initialize")
        agentls = {"protocolVersion": version, "features": ["steer"]}
        self.send(
            {
                "id": request["id"],
                "result": {"capabilities": {"experimental": {"agentls": agentls}}},
            }
        )
        if version == PROTOCOL_VERSION:
            await self.expect("initialized")


@pytest.fixture
async def pair():
    ours, theirs = socket.socketpair()
    client_side = await asyncio.open_connection(sock=ours)
    peer = Peer(*await asyncio.open_connection(sock=theirs))
    yield client_side, peer
    peer.writer.close()


async def connect(pair, **kwargs) -> tuple[Client, Peer]:
    (reader, writer), peer = pair
    client, _ = await asyncio.gather(
        Client.connect(reader, writer, **kwargs), peer.answer_initialize()
    )
    return client, peer


async def hang_up(client: Client, peer: Peer) -> None:
    peer.writer.close()
    await asyncio.wait_for(client.connection.wait_closed(), 60)
    await client.close()


async def open_session(client: Client, peer: Peer, **kwargs):
    fixture = load(PROTOCOL_FIXTURES / "session_new.json")
    task = asyncio.create_task(client.new_session("/", **kwargs))
    request = await peer.expect("session/new")
    peer.send({"id": request["id"], "result": fixture["result"]})
    return await task


# -- typed updates ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", UPDATE_FIXTURES, ids=lambda p: p.stem)
def test_every_update_fixture_parses_to_its_model(path):
    raw = load(path)["params"]["update"]
    update = parse_update(raw)
    assert update.kind == raw["kind"] and not isinstance(update, UnknownUpdate)
    assert update.to_wire() == raw


def test_every_update_kind_is_exported_by_the_client():
    missing = [v.__name__ for v in VARIANTS if getattr(client_module, v.__name__, None) is not v]
    assert missing == [], f"export these update models from protocol/client/__init__.py: {missing}"


async def test_a_turn_yields_typed_updates_passes_unknown_ones_through_and_ends(pair):
    client, peer = await connect(pair)
    session = await open_session(client, peer)
    frames = [load(p) for p in [*UPDATE_FIXTURES, *FORWARD_FIXTURES]]
    turn = session.prompt("What is in notes.txt?")
    request = await peer.expect("session/prompt")
    assert request["params"] == {
        "sessionId": session.id,
        "prompt": [{"type": "text", "text": "What is in notes.txt?"}],
    }
    for frame in frames:
        peer.send(frame)
    prompt = load(PROTOCOL_FIXTURES / "session_prompt.json")
    peer.send({"id": request["id"], "result": prompt["result"]})
    items = [item async for item in turn]
    await hang_up(client, peer)

    *updates, result = items
    assert result == PromptResult.model_validate(prompt["result"]) == turn.result
    assert len(updates) == len(frames) and updates == turn.updates
    known = len(UPDATE_FIXTURES)
    for index, (update, frame) in enumerate(zip(updates, frames, strict=True)):
        raw = frame["params"]["update"]
        if index < known:
            assert type(update) in VARIANTS and update.to_wire() == raw
        else:
            assert update == UnknownUpdate(kind=raw["kind"], data=raw)
    assert turn.turn_id == prompt["result"]["turnId"]


async def test_stragglers_and_malformed_updates_are_dropped_a_load_replay_is_kept(pair):
    client, peer = await connect(pair)
    loading = asyncio.create_task(client.load_session("sess_5f1c2a9e0b7d4c33"))
    request = await peer.expect("session/load")
    replay = load(PROTOCOL_FIXTURES / "update_user_message_chunk.json")
    peer.send(replay)
    peer.send(
        {"id": request["id"], "result": load(PROTOCOL_FIXTURES / "session_load.json")["result"]}
    )
    session = await loading
    assert [u.to_wire() for u in session.history] == [replay["params"]["update"]]

    turn = session.prompt("go")
    request = await peer.expect("session/prompt")

    def update(turn_id: str, seq: int, text: str) -> dict:
        params = {"sessionId": session.id, "turnId": turn_id, "seq": seq}
        return {
            "method": "session/update",
            "params": params | {"update": {"kind": "agent_message_chunk", "text": text}},
        }

    peer.send(update("turn_new", 2, "kept"))
    peer.send({"method": "session/update", "params": {"sessionId": session.id, "seq": "x"}})
    peer.send(update("turn_old", 3, "from another turn"))
    peer.send(
        {
            "method": "session/update",
            "params": {"sessionId": "sess_other", "turnId": "t", "seq": 1, "update": {}},
        }
    )
    peer.send({"method": "window/logMessage", "params": {"type": 3, "message": "ignored"}})
    result = load(PROTOCOL_FIXTURES / "session_prompt.json")["result"] | {"turnId": "turn_new"}
    peer.send({"id": request["id"], "result": result})
    await turn.wait()
    peer.send(update("turn_new", 4, "too late"))
    await asyncio.sleep(0.05)
    await hang_up(client, peer)
    assert turn.text == "kept" and turn.last_seq == 2 and len(session.history) == 1


def test_text_leaves_out_what_a_retry_discards():
    chunks = [AgentMessageChunk(text=t) for t in ("Let me ", "look.", "Half an ans")]
    step = StepFinish(step=1, finish_reason="tool_use", usage=Usage())
    retry = parse_update({"kind": "stream_retry", "attempt": 1, "delay": 0.1, "error": "529"})
    again = AgentMessageChunk(text="The answer.")
    updates = [chunks[0], chunks[1], step, chunks[2], retry, again]
    assert client_module.answer_text(updates) == "Let me look.The answer."


# -- typed errors -----------------------------------------------------------------------------


def test_every_error_code_has_an_exception_class():
    assert set(ERROR_CLASSES) == set(ERROR_CODES), "add a class to protocol/client/_errors.py"
    assert all(
        issubclass(cls, RpcError) and cls.code == code for code, cls in ERROR_CLASSES.items()
    )


async def test_error_responses_raise_their_class(pair):
    client, peer = await connect(pair)
    for code, cls in [*ERROR_CLASSES.items(), (-32099, RpcError)]:
        task = asyncio.create_task(client.engines())
        request = await peer.expect("engines/list")
        error = {"code": code, "message": "no", "data": [{"path": "x"}]}
        peer.send({"id": request["id"], "error": error})
        with pytest.raises(RpcError) as raised:
            await task
        assert type(raised.value) is cls
        assert (raised.value.code, raised.value.message, raised.value.data) == (
            code,
            "no",
            [{"path": "x"}],
        )
    await hang_up(client, peer)


async def test_a_closed_connection_ends_the_turn_with_connection_closed(pair):
    client, peer = await connect(pair)
    session = await open_session(client, peer)
    turn = session.prompt("hi")
    await peer.expect("session/prompt")
    peer.send(load(PROTOCOL_FIXTURES / "update_agent_message_chunk.json"))
    peer.writer.close()
    with pytest.raises(ConnectionClosed):
        await turn.wait()
    assert [u.kind for u in turn.updates] == ["agent_message_chunk"]
    with pytest.raises(ConnectionClosed):
        await session.run("again")
    await client.close()


async def test_another_protocol_version_is_refused(pair):
    (reader, writer), peer = pair
    with pytest.raises(ProtocolVersionError):
        await asyncio.gather(Client.connect(reader, writer), peer.answer_initialize(version=2))


# -- interaction requests ---------------------------------------------------------------------


async def ask(peer: Peer, name: str, msg_id: str = "agentls-1") -> dict:
    fixture = load(PROTOCOL_FIXTURES / f"{name}.json")
    peer.send({"id": msg_id, "method": fixture["method"], "params": fixture["params"]})
    return await peer.read()


async def test_default_handlers_reject_and_decline(pair):
    client, peer = await connect(pair)
    await open_session(client, peer)
    permission = await ask(peer, "session_request_permission", "agentls-1")
    question = await ask(peer, "session_ask_question", "agentls-2")
    unknown = await ask(peer, "engines_list", "agentls-3")  # not a server->client method
    await hang_up(client, peer)
    assert permission == {
        "jsonrpc": "2.0",
        "id": "agentls-1",
        "result": {"outcome": {"outcome": "selected", "optionId": "reject_once"}},
    }
    assert question == {"jsonrpc": "2.0", "id": "agentls-2", "result": {"declined": True}}
    assert unknown["error"]["code"] == -32601


async def test_session_handlers_win_and_failing_handlers_fall_back(pair):
    def broken(request):
        raise RuntimeError("bug in the script")

    client, peer = await connect(pair, on_permission=allow_once, on_question=broken)

    async def answer(request):
        return AskQuestionResult(
            answers={q.question: q.options[0].label for q in request.questions}
        )

    session = await open_session(client, peer, on_question=answer)
    permission = await ask(peer, "session_request_permission")
    question = await ask(peer, "session_ask_question")
    session.on_question = None
    fallback = await ask(peer, "session_ask_question")
    await hang_up(client, peer)
    assert permission["result"] == {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    assert question["result"] == {
        "answers": {"Which test runner?": "pytest", "Which folders?": "src"}
    }
    assert fallback["result"] == {"declined": True}


async def test_cancel_request_stops_a_waiting_handler(pair):
    started, stopped = asyncio.Event(), asyncio.Event()

    async def slow(request):
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()

    client, peer = await connect(pair, on_permission=slow)
    fixture = load(PROTOCOL_FIXTURES / "session_request_permission.json")
    peer.send({"id": "agentls-9", "method": fixture["method"], "params": fixture["params"]})
    await asyncio.wait_for(started.wait(), 60)
    peer.send({"method": "$/cancelRequest", "params": {"id": "agentls-9"}})
    await asyncio.wait_for(stopped.wait(), 60)
    await hang_up(client, peer)


def test_the_client_imports_neither_pygls_nor_provider_sdks():
    code = (
        "import sys, protocol.client\n"
        "heavy = ('pygls', 'lsprotocol', 'anthropic', 'openai', 'httpx', 'server')\n"
        "print([m for m in sys.modules if m.split('.')[0] in heavy])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stderr

"""`agentls serve` keeps LSP's lifecycle and code table: nothing is served before `initialize`,
agentls's own error codes stay out of the ranges JSON-RPC and LSP reserve, and `initialize`
advertises only what agentls does. Real stdio, a raw pipe or the pygls client."""

from __future__ import annotations

import pytest

from protocol import errors
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import RawPipe, new_session, open_session, prompt, server_env

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
INITIALIZE["params"] = {"processId": None, "capabilities": {}}


def reserved(code: int) -> bool:
    """JSON-RPC's pre-defined range; LSP's own codes sit inside it (-32099..-32000, -32899..-32800)."""
    return -32768 <= code <= -32000


async def reply_to(pipe: RawPipe, msg_id: int) -> dict:
    while (reply := await pipe.read()).get("id") != msg_id:
        pass
    return reply


async def test_a_request_before_initialize_is_server_not_initialized(tmp_path, workspace):
    pipe = await RawPipe.spawn(server_env(tmp_path))
    try:
        pipe.send({"jsonrpc": "2.0", "id": 1, "method": "engines/list", "params": {}})
        early = await reply_to(pipe, 1)
        pipe.send(INITIALIZE)
        await reply_to(pipe, 0)
        pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        pipe.send({"jsonrpc": "2.0", "id": 2, "method": "engines/list", "params": {}})
        late = await reply_to(pipe, 2)
    finally:
        await pipe.close()
    assert early["error"]["code"] == errors.SERVER_NOT_INITIALIZED == -32002
    assert "initialize" in early["error"]["message"]
    assert late["result"]["engines"][0]["id"] == "native"


def test_agentls_codes_are_outside_the_reserved_ranges():
    ours = [c for c in errors.ERROR_CODES if c not in errors.STANDARD]
    assert len(ours) >= 4 and not [c for c in ours if reserved(c)]


async def test_an_unknown_session_is_not_an_lsp_code(tmp_path, workspace, fake_llm):
    client, _ = await open_session(tmp_path, workspace, fake_llm)
    try:
        with pytest.raises(Exception) as unknown:
            await client.call("session/set_mode", {"sessionId": "nope", "modeId": "plan"})
        with pytest.raises(Exception) as unknown_prompt:
            await client.call("session/prompt", prompt("nope", "hi"))
    finally:
        await client.close()
    for err in (unknown.value, unknown_prompt.value):
        assert err.code == errors.SESSION_NOT_FOUND and not reserved(err.code), err


async def test_initialize_advertises_only_agentls(tmp_path):
    pipe = await RawPipe.spawn(server_env(tmp_path))
    try:
        pipe.send(INITIALIZE)
        result = (await reply_to(pipe, 0))["result"]
    finally:
        await pipe.close()
    assert set(result["capabilities"]) == {"experimental"}, result["capabilities"]
    assert result["capabilities"]["experimental"]["agentls"]["protocolVersion"] >= 1
    assert result["serverInfo"]["name"] == "agentls"


async def test_session_list_has_the_open_sessions_before_their_first_turn(
    tmp_path, workspace, fake_llm
):
    fake_llm.script(Reply(text="hello"))
    client, first = await open_session(tmp_path, workspace, fake_llm)
    try:
        await client.call("session/prompt", prompt(first, "hi"))
        fresh = await new_session(client, workspace)
        listed = await client.call("session/list", {})
        await client.call("session/close", {"sessionId": fresh})
        after_close = await client.call("session/list", {})
    finally:
        await client.close()
    assert [s["sessionId"] for s in listed["data"]] == [fresh, first], listed
    assert [s["sessionId"] for s in after_close["data"]] == [first], after_close


async def test_a_question_is_not_labelled_as_thinking(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("ask_user_question", {"question": "Tabs?"})]),
        Reply(text="ok"),
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    client.on_question = lambda p: {"answers": {"Tabs?": "yes"}}
    try:
        await client.call("session/prompt", prompt(session_id, "ask"))
    finally:
        await client.close()
    [call] = [u["update"] for u in client.updates if u["update"]["kind"] == "tool_call"]
    assert call["toolKind"] == "other", call


def test_every_client_names_every_code_alike():
    import re

    from protocol.client import ERROR_CLASSES
    from tests.agent_client import ROOT

    assert {c: cls.__name__ for c, cls in ERROR_CLASSES.items()} == errors.ERROR_NAMES
    ts = (ROOT / "editors/protocol/protocol.ts").read_text()
    table = ts[ts.index("export const ErrorCode = {") :]
    assert dict(re.findall(r"^  (\w+): (-\d+),$", table, re.M)) == {
        n: str(c) for c, n in errors.ERROR_NAMES.items()
    }
    java = ROOT / "editors/jetbrains/core/src/main/java/dev/agentls/core/rpc/RpcException.java"
    constants = re.findall(r"static final int (\w+) = (-\d+);", java.read_text())
    snake = {re.sub(r"(?<!^)([A-Z])", r"_\1", n).upper(): c for c, n in errors.ERROR_NAMES.items()}
    assert {k: int(v) for k, v in constants} == snake

"""The editor's trust (`workspaceTrusted` on `session/new`) is stored with the session: a
`session/load` in a new `agentls serve` process keeps the folder trusted, and a session the
editor never trusted stays untrusted (loading never widens trust). Real processes, one store."""

from __future__ import annotations

from typing import Any

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env
from tests.trust_fixture import add_skill, bash, clone


async def serve(home, calls, answer: str = "reject_once") -> tuple[AgentClient, list[Any]]:
    client = AgentClient()
    client.on_permission = lambda p: {"outcome": {"outcome": "selected", "optionId": answer}}
    await client.start(server_env(home, OPENAI_API_KEY="k"))
    results = []
    try:
        await client.initialize()
        for method, params in calls:
            results.append(await client.call(method, params))
    finally:
        await client.close()
    return client, results


def prompt(session_id: str) -> tuple[str, dict]:
    return "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}


@pytest.mark.parametrize("trusted", [True, False])
async def test_a_loaded_session_keeps_the_trust_the_editor_gave(
    tmp_path, workspace, fake_llm, trusted
):
    clone(workspace, fake_llm)
    add_skill(workspace, "x", "allowed-tools: Bash")
    skill = FakeToolCall("skill", {"skill": "x"}, id="call_sk")
    fake_llm.script(
        Reply(text="hello"),
        Reply(tool_calls=[skill]),
        Reply(tool_calls=[bash("touch allowed")]),
        Reply(text="done"),
    )
    new = {"cwd": str(workspace), **({"workspaceTrusted": True} if trusted else {})}
    client = AgentClient()
    await client.start(server_env(tmp_path, OPENAI_API_KEY="k"))
    try:
        await client.initialize()
        sid = (await client.call("session/new", new))["sessionId"]
        first = await client.call(*prompt(sid))
    finally:
        await client.close()
    assert first["terminal"] == "completed"

    client, [_loaded, result] = await serve(
        tmp_path, [("session/load", {"sessionId": sid}), prompt(sid)]
    )
    assert result["terminal"] == "completed"
    if trusted:
        assert client.permission_requests == []
        assert (workspace / "allowed").exists()
    else:
        assert len(client.permission_requests) == 1
        assert not (workspace / "allowed").exists()

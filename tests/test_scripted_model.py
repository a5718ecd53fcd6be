"""`--provider scripted` for script authors: `AGENTLS_SCRIPT` is a file path or the JSON itself,
a misspelt key is a clear error, and every session plays the script from its start."""

from __future__ import annotations

import json

import pytest

from tests.agent_client import AgentClient, new_session, prompt, server_env

SCRIPT = [
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"text": "The notes say hi."},
]


async def serve(tmp_path, script: str) -> AgentClient:
    client = AgentClient()
    env = server_env(tmp_path, AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=script)
    await client.start(env, "--permission-mode", "bypassPermissions")
    await client.initialize()
    return client


def texts(client: AgentClient, session_id: str) -> str:
    return "".join(
        u["update"].get("text", "")
        for u in client.updates
        if u["sessionId"] == session_id and u["update"]["kind"] == "agent_message_chunk"
    )


@pytest.mark.parametrize("form", ["path", "inline"])
async def test_each_session_plays_the_script_from_its_start(tmp_path, workspace, form):
    (workspace / "notes.txt").write_text("hi\n")
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT))
    client = await serve(tmp_path, str(path) if form == "path" else json.dumps(SCRIPT))
    try:
        sessions = [await new_session(client, workspace) for _ in range(3)]
        results = [await client.call("session/prompt", prompt(s, "read it")) for s in sessions]
    finally:
        await client.close()
    assert [r["terminal"] for r in results] == ["completed"] * 3, results
    assert [texts(client, s) for s in sessions] == ["The notes say hi."] * 3


@pytest.mark.parametrize(
    ("script", "named"),
    [
        ([{"txt": "hello"}], "'txt'"),
        ([{"toolCalls": [{"tool": "read_file", "args": {}}]}], "'tool'"),
        ({"text": "not a list"}, "a JSON list"),
    ],
)
async def test_a_wrong_key_is_a_clear_error(tmp_path, workspace, script, named):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    client = await serve(tmp_path, str(path))
    try:
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "hi"))
    finally:
        await client.close()
    assert result["terminal"] == "failed", result
    assert "AGENTLS_SCRIPT" in result["error"] and named in result["error"], result

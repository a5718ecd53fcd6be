"""A store that cannot be opened says so on every request that needs it, and is tried again:
`session/load` never answers "unknown session" for a session that is on disk. Through
`agentls serve` over real stdio."""

from __future__ import annotations

import sqlite3

from pygls.exceptions import JsonRpcException

from server.testing.fake_llm import Reply
from tests.agent_client import prompt, start


async def test_a_store_that_cannot_open_says_so_and_is_tried_again(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="stored"))
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        assert (await client.call("session/prompt", prompt(sid, "hi")))["terminal"] == "completed"
    finally:
        await client.close()
    db = tmp_path / "data" / "sessions.db"
    with sqlite3.connect(db) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute("PRAGMA user_version = 999")  # a newer agentls's store: this one cannot open it

    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        answers = []
        for method, params in (
            ("session/load", {"sessionId": sid}),
            ("session/list", {}),
            ("session/search", {"query": "hi"}),
        ):
            try:
                await client.call(method, params)
                answers.append(f"{method}: answered")
            except JsonRpcException as exc:
                answers.append(f"{method}: {exc.message}")
        with sqlite3.connect(db) as conn:
            conn.execute(f"PRAGMA user_version = {version}")
        loaded = await client.call("session/load", {"sessionId": sid})
    finally:
        await client.close()
    for answer in answers:
        assert "cannot be opened" in answer and "newer" in answer, answers
        assert "unknown session" not in answer
    assert loaded["sessionId"] == sid

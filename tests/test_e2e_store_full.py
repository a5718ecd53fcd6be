"""A store that cannot write (the disk is full): `agentls serve` says so and keeps the session
going in memory, then writes what is pending once space returns."""

from __future__ import annotations

import resource

from server.testing.fake_llm import Reply
from tests.test_acp_frontend import Editor, agentls_acp, text
from tests.test_e2e_interrupted import configure, of_turn, prompt, start
from tests.test_e2e_interrupted_doors import env_for


def cap_file_size(pid: int, limit: int) -> None:
    """Every write of the process past `limit` bytes into a file fails, as on a full disk."""
    hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, hard))


async def test_a_full_disk_is_reported_and_what_is_pending_is_written_later(
    tmp_path, workspace, fake_llm
):
    configure(workspace, fake_llm, "openai")
    fake_llm.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    client = await start(tmp_path, "openai")
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        first = await client.call("session/prompt", prompt(sid, "first"))
        cap_file_size(client._server.pid, 1)
        second = await client.call("session/prompt", prompt(sid, "second"))
        cap_file_size(client._server.pid, resource.RLIM_INFINITY)
        third = await client.call("session/prompt", prompt(sid, "third"))
    finally:
        await client.close()
    assert first["terminal"] == second["terminal"] == third["terminal"] == "completed"
    assert "stored" not in first and "stored" not in third
    assert second["stored"] is False
    updates = of_turn(client.updates, second["turnId"])
    [warning] = [u for u in updates if u["kind"] == "store_warning"]
    assert "disk" in warning["error"] and warning["pending"] > 0, warning
    assert updates[-1]["kind"] == "turn_end" and updates[-1]["stored"] is False
    assert "stored" not in of_turn(client.updates, third["turnId"])[-1]

    reloaded = await start(tmp_path, "openai")
    try:
        await reloaded.call("session/load", {"sessionId": sid})
        fake_llm.script(Reply(text="four"))
        fourth = await reloaded.call("session/prompt", prompt(sid, "fourth"))
    finally:
        await reloaded.close()
    texts = [
        (u["update"]["kind"], u["update"].get("text"))
        for u in reloaded.updates
        if u["update"]["kind"] in ("user_message_chunk", "agent_message_chunk")
    ]
    assert texts[:6] == [
        ("user_message_chunk", "first"),
        ("agent_message_chunk", "one"),
        ("user_message_chunk", "second"),
        ("agent_message_chunk", "two"),
        ("user_message_chunk", "third"),
        ("agent_message_chunk", "three"),
    ]
    assert fourth["terminal"] == "completed"


async def test_acp_says_a_turn_was_not_stored(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    editor = Editor()
    async with agentls_acp(tmp_path, env_for(tmp_path, fake_llm, "openai"), editor) as (conn, _):
        proc = editor.process.pid
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        first = await conn.prompt(session_id=sid, prompt=text("first"))
        cap_file_size(proc, 1)
        second = await conn.prompt(session_id=sid, prompt=text("second"))
        cap_file_size(proc, resource.RLIM_INFINITY)
    assert first.field_meta is None or "stored" not in first.field_meta.get("agentls", {})
    assert second.field_meta["agentls"]["stored"] is False
    notes = [
        u
        for u in editor.updates
        if u.session_update == "agent_message_chunk"
        and (u.field_meta or {}).get("agentls", {}).get("storeWarning")
    ]
    assert len(notes) == 1 and "could not store" in notes[0].content.text, notes

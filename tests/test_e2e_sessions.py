"""Durable sessions end to end: real `agentls serve` processes over stdio sharing one data dir,
the loopback fake model, restarts and a kill -9 in the middle of a turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
import time

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env, use_fake_model

CODEWORD = "PELICAN"


async def start(tmp_path) -> AgentClient:
    client = AgentClient()
    await client.start(server_env(tmp_path, OPENAI_API_KEY="test-key"))
    await client.initialize()
    return client


def prompt(session_id, text):
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def remembers(body) -> Reply:
    """The scripted model's check: the request carries both earlier turns in full."""
    sent = json.dumps(body["messages"])
    needed = [f"The codeword is {CODEWORD}", "Noted.", "call_r", "hello from notes", "It says"]
    missing = [n for n in needed if n not in sent]
    return Reply(text=f"missing: {missing}" if missing else f"The codeword was {CODEWORD}.")


def journal_view(updates, prompts):
    """What `session/load` should replay for these live updates: the prompt first, chunk runs
    merged, progress (step_finish, in_progress cards) left out."""
    out, prompts = [], iter(prompts)
    for u in updates:
        update, turn = u["update"], u["turnId"]
        if not out or out[-1]["turnId"] != turn:
            out.append(
                {"turnId": turn, "update": {"kind": "user_message_chunk", "text": next(prompts)}}
            )
        kind = update["kind"]
        if kind in ("step_finish", "permission") or update.get("status") == "in_progress":
            continue
        last = out[-1]["update"]
        if kind == "agent_message_chunk" and last["kind"] == kind:
            last["text"] += update["text"]
        else:
            out.append({"turnId": turn, "update": dict(update)})
    return out


async def test_a_session_survives_a_restart_with_its_full_context(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello from notes\n")
    use_fake_model(workspace, fake_llm)
    fake_llm.script(
        Reply(text="Noted."),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"}, id="call_r")]),
        Reply(text="It says hello."),
        remembers,
    )
    prompts = [f"The codeword is {CODEWORD}. Remember it.", "What is in notes.txt?"]
    first = await start(tmp_path)
    try:
        session_id = (await first.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        for text in prompts:
            result = await first.call("session/prompt", prompt(session_id, text))
            assert result["terminal"] == "completed", result
    finally:
        await first.close()

    second = await start(tmp_path)
    try:
        listed = await second.call("session/list", {"cwd": str(workspace)})
        found = await second.call("session/search", {"query": CODEWORD.lower()})
        loaded = await second.call("session/load", {"sessionId": session_id})
        replayed = list(second.updates)
        third = await second.call("session/prompt", prompt(session_id, "What was the codeword?"))
    finally:
        await second.close()

    assert listed == {
        "data": [
            {
                "sessionId": session_id,
                "title": prompts[0],
                "cwd": str(workspace),
                "updatedAt": listed["data"][0]["updatedAt"],
            }
        ]
    }
    assert [(h["sessionId"], h["role"]) for h in found["hits"]] == [(session_id, "user")]
    assert found["hits"][0]["snippet"] == f"The codeword is **{CODEWORD}**. Remember it."
    assert loaded["sessionId"] == session_id and loaded["model"] == "gpt-5.5"
    seqs = [u["seq"] for u in replayed]  # as sent live; progress and merged chunks left gaps
    assert seqs == sorted(set(seqs)) and seqs[0] == 1
    assert [{"turnId": u["turnId"], "update": u["update"]} for u in replayed] == journal_view(
        first.updates, prompts
    )
    assert third["terminal"] == "completed"
    answer = [u["update"] for u in second.updates if u["turnId"] == third["turnId"]]
    assert "".join(u.get("text", "") for u in answer) == f"The codeword was {CODEWORD}."
    seqs = [u["seq"] for u in second.updates]
    assert seqs == sorted(set(seqs))


async def test_kill_9_mid_turn_keeps_completed_turns_and_aborts_the_cut_one(
    tmp_path, workspace, fake_llm
):
    use_fake_model(workspace, fake_llm)
    words = " ".join(f"word{i}" for i in range(200))
    fake_llm.script(Reply(text="First answer."), Reply(text=words, chunk_delay=0.2))
    first = await start(tmp_path)
    try:
        session_id = (await first.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        done = await first.call("session/prompt", prompt(session_id, "one"))
        streaming = asyncio.create_task(first.call("session/prompt", prompt(session_id, "two")))
        await first.wait_for(lambda u: u["update"].get("text", "").startswith("word5"))
        await stored(tmp_path / "data" / "sessions.db", "word5")
        first._server.kill()
        await first._server.wait()
        streaming.cancel()
    finally:
        await first.close()

    db = tmp_path / "data" / "sessions.db"
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()

    second = await start(tmp_path)
    try:
        await second.call("session/load", {"sessionId": session_id})
        replayed = [(u["turnId"], u["update"]) for u in second.updates]
    finally:
        await second.close()

    conn = sqlite3.connect(db)
    statuses = conn.execute("SELECT id, status FROM turns ORDER BY started_at").fetchall()
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    cut = statuses[1][0]
    assert statuses == [(done["turnId"], "completed"), (cut, "aborted")]
    first_turn = [u for t, u in replayed if t == done["turnId"]]
    assert [u["kind"] for u in first_turn] == [
        "user_message_chunk",
        "agent_message_chunk",
        "turn_end",
    ]
    assert first_turn[1]["text"] == "First answer."
    cut_turn = [u for t, u in replayed if t == cut]
    assert [u["kind"] for u in cut_turn] == [
        "user_message_chunk",
        "agent_message_chunk",
        "turn_end",
    ]
    assert words.startswith(cut_turn[1]["text"]) and "word5" in cut_turn[1]["text"]
    assert cut_turn[2]["terminal"] == "aborted"


async def stored(db, text: str, *, within: float = 60.0) -> None:
    """Wait until the writer has committed a journal entry holding `text`."""
    deadline = time.monotonic() + within
    while True:
        try:
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
                rows = conn.execute("SELECT entry FROM journal").fetchall()
            if any(text in entry for (entry,) in rows):
                return
        except sqlite3.OperationalError:
            pass  # not created yet, or busy
        assert time.monotonic() < deadline, f"{text!r} was never stored"
        await asyncio.sleep(0.05)


def run_print(tmp_path, workspace, *args):
    proc = subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", "--output-format", "json", *args],
        capture_output=True,
        cwd=workspace,
        env=server_env(tmp_path, OPENAI_API_KEY="test-key"),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


async def test_stream_json_resume_and_continue_carry_the_context(tmp_path, workspace, fake_llm):
    use_fake_model(workspace, fake_llm)
    fake_llm.script(
        Reply(text="Noted."),
        lambda body: Reply(text="yes" if CODEWORD in json.dumps(body["messages"]) else "no"),
        lambda body: Reply(text="yes" if CODEWORD in json.dumps(body["messages"]) else "no"),
    )
    created = await asyncio.to_thread(
        run_print, tmp_path, workspace, "--session-id", "sess_f1ed", f"The codeword is {CODEWORD}"
    )
    resumed = await asyncio.to_thread(
        run_print, tmp_path, workspace, "--resume", "sess_f1ed", "Do you know the codeword?"
    )
    continued = await asyncio.to_thread(run_print, tmp_path, workspace, "--continue", "And now?")
    assert [r["session_id"] for r in (created, resumed, continued)] == ["sess_f1ed"] * 3
    assert [r["result"] for r in (created, resumed, continued)] == ["Noted.", "yes", "yes"]

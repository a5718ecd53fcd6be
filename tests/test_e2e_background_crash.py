"""After the server dies while a background subagent runs, the model of the loaded session is
told which subagent was interrupted and what it had done (through `agentls serve`, kill -9,
a new process, the strict fake model)."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import new_session, prompt, start
from tests.test_e2e_background_subagents import SUBTASK, background_task, text_of


class Router:
    """The subagent lists the folder, then hangs in its next model call; the parent's second
    reply waits until the subagent got that far (so the step that saves it knows)."""

    def __init__(self) -> None:
        self.sub_listed = threading.Event()
        self.hang = threading.Event()
        self.parent = [Reply(tool_calls=[background_task()]), self._waiting, Reply(text="ok")]
        self.last_parent: dict[str, Any] = {}

    def _waiting(self, body: dict[str, Any]) -> Reply:
        self.sub_listed.wait(120)
        return Reply(text="It is counting.")

    def __call__(self, body: dict[str, Any]) -> Reply:
        users = [m for m in body["messages"] if m["role"] == "user"]
        if users and SUBTASK in text_of(users[0]):
            if any(m["role"] == "tool" for m in body["messages"]):
                self.sub_listed.set()
                self.hang.wait(120)
                return Reply(text="too late")
            return Reply(tool_calls=[FakeToolCall("list_dir", {"path": "src"})])
        self.last_parent = body
        reply = self.parent.pop(0)
        return reply(body) if callable(reply) else reply


async def saved(db: Path, session_id: str, text: str) -> None:
    """Until the stored session's state holds `text` (the store writes on a thread of its own)."""

    def state() -> str:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            row = conn.execute("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row[0] if row else ""

    deadline = time.monotonic() + 60
    while text not in await asyncio.to_thread(state):
        assert time.monotonic() < deadline, "the step was never saved"
        await asyncio.sleep(0.05)


async def test_the_model_is_told_which_background_subagent_was_interrupted(
    tmp_path, workspace, fake_llm
) -> None:
    (workspace / "src").mkdir()
    router = Router()
    fake_llm.script(*[router] * 6)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        turn = asyncio.create_task(client.call("session/prompt", prompt(session_id, "count")))
        await client.wait_for(
            lambda u: u["update"]["kind"] == "step_finish" and u["update"]["step"] == 2, 120
        )
        await saved(tmp_path / "data" / "sessions.db", session_id, "List src")
        assert client._server is not None
        client._server.kill()
        await asyncio.gather(turn, return_exceptions=True)
    finally:
        router.hang.set()
        await client.close()

    again = await start(tmp_path, workspace, fake_llm)
    try:
        await again.initialize()
        await again.call("session/load", {"sessionId": session_id})
        result = await again.call("session/prompt", prompt(session_id, "what happened?"))
    finally:
        await again.close()
    assert result["terminal"] == "completed", result.get("error")
    told = "\n".join(text_of(m) for m in router.last_parent["messages"] if m["role"] == "user")
    assert "call_bg" in told and "explorer" in told and "count files" in told, told
    assert "interrupted" in told and "List src" in told, told
    assert fake_llm.refusals == []

"""A background subagent that works on after its turn ended, through `agentls serve` for a
client that shows turns it did not prompt: its tool cards finish live and after a reload, its
model calls are in the trace, and `agentls replay` re-runs the turn that started it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env, start
from tests.test_e2e_background_subagents import CAPS, Router, background_task


def agentls(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        env=server_env(tmp_path),  # no key: the trace and the replay need no model
        timeout=120,
    )


def card_statuses(updates: list[dict[str, Any]], call_id: str) -> list[str]:
    return [
        u["update"].get("status", "announced")
        for u in updates
        if u["update"]["kind"] in ("tool_call", "tool_call_update")
        and u["update"]["toolCallId"] == call_id
    ]


async def test_a_background_subagents_work_after_its_turn_is_shown_stored_and_replayable(
    tmp_path, workspace, fake_llm
):
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("A = 1\n")
    (workspace / "src" / "b.py").write_text("B = 2\n")
    router = Router(
        parent=[
            Reply(tool_calls=[background_task()]),
            Reply(text="Counting in the background."),
            Reply(text="The count is in: 2 Python files."),
        ],
        sub=[
            Reply(tool_calls=[FakeToolCall("glob", {"pattern": "src/*.py"}, id="g1")]),
            Reply(tool_calls=[FakeToolCall("read_file", {"path": "src/a.py"}, id="r1")]),
            Reply(text="There are 2 Python files under src/."),
        ],
    )
    fake_llm.script(*[router] * 6)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize(CAPS)
        opened = await client.call("session/new", {"cwd": str(workspace)})
        session_id = opened["sessionId"]
        first = await client.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "count them"}]},
        )
        assert first["terminal"] == "completed"
        router.release.set()  # the subagent starts its work once its turn has ended
        await client.wait_for(
            lambda u: u["update"]["kind"] == "turn_end" and u["turnId"] != first["turnId"], 120
        )
        assert fake_llm.refusals == []
        live = list(client.updates)
    finally:
        router.release.set()
        await client.close()

    for call_id in ("call_bg/g1", "call_bg/r1"):
        assert card_statuses(live, call_id) == ["announced", "in_progress", "completed"], call_id

    again = AgentClient()
    await again.start(server_env(tmp_path))
    try:
        await again.initialize(CAPS)
        await again.call("session/load", {"sessionId": session_id})
        reloaded = list(again.updates)
    finally:
        await again.close()
    for call_id in ("call_bg/g1", "call_bg/r1"):
        assert card_statuses(reloaded, call_id)[-1] == "completed", call_id

    rows = [
        json.loads(line)
        for line in agentls(tmp_path, "sessions", "export", session_id).stdout.splitlines()
    ]
    asked = [
        r for r in rows if r.get("kind") == "provider_request" and r["turnId"] == first["turnId"]
    ]
    whose = [(r["data"].get("subagent") or {}).get("id") for r in asked]
    # the turn's own two calls and its subagent's three, in whatever order they ran
    assert (whose.count(None), whose.count("call_bg"), len(whose)) == (2, 3, 5), whose

    replayed = agentls(tmp_path, "replay", first["turnId"], "--verify", "--json")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["verified"] is True, report
    assert [c["name"] for c in report["replay"]["toolCalls"]] == ["task", "glob", "read_file"]
    assert report["notes"] == []

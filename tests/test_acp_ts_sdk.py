"""`agentls acp` driven by the ACP TypeScript SDK's client (tests/clients/acp_client.mjs), as
TypeScript editors and tools drive it: permissions with the editor serving files, a form
question and the no-form fallback, cancel, and session/load."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.node_clients import CLIENTS, NODE, require_clients
from tests.test_acp_frontend import ASK, fake_env, tool_results

SCRIPT = CLIENTS / "acp_client.mjs"
FS = {"fs": {"readTextFile": True, "writeTextFile": True}}
FORM = {"elicitation": {"form": {}}}


@pytest.fixture(autouse=True)
def _clients() -> None:
    require_clients()


async def run_client(tmp_path: Path, env: dict[str, str], **scenario: Any) -> list[dict]:
    """One run of the SDK client against a fresh `agentls acp`; its events, in order."""
    command = [sys.executable, "-m", "server.cli", "acp"]
    env = {**env, "AGENTLS_ACP_COMMAND": json.dumps(command)}
    with (tmp_path / "acp-stderr.log").open("a") as log:
        proc = await asyncio.create_subprocess_exec(
            str(NODE),
            str(SCRIPT),
            json.dumps(scenario),
            env=env,
            cwd=CLIENTS,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
    events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    errors = [e for e in events if e["event"] == "error"]
    assert not errors and proc.returncode == 0, errors or proc.returncode
    return events


def updates(events: list[dict], kind: str | None = None) -> list[dict]:
    found = [e["update"] for e in events if e["event"] == "update"]
    return [u for u in found if kind is None or u["sessionUpdate"] == kind]


def answer(events: list[dict], method: str) -> dict:
    return next(e["result"] for e in events if e.get("method") == method)


def closed(events: list[dict]) -> dict[str, str]:
    return {
        u["toolCallId"]: u["status"]
        for u in updates(events, "tool_call_update")
        if u.get("status") in ("completed", "failed")
    }


async def test_edits_asked_and_served_by_the_editor(tmp_path, workspace, fake_llm):
    notes = workspace / "notes.txt"
    notes.write_text("on disk\n")
    edit = {"path": "notes.txt", "old_string": "unsaved", "new_string": "saved"}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("edit_file", edit)]),
        Reply(text="done"),
    )
    events = await run_client(
        tmp_path,
        fake_env(tmp_path, fake_llm),
        cwd=str(workspace),
        caps=FS,
        prompt="fix the notes",
        buffers={str(notes): "unsaved buffer\n"},
        pick="allow_once",
    )

    assert answer(events, "session/prompt")["stopReason"] == "end_turn"
    order = [(e["event"], e.get("update", {}).get("sessionUpdate")) for e in events]
    first_read = order.index(("read", None))
    assert ("update", "tool_call") in order[:first_read]
    assert "1: unsaved buffer" in tool_results(fake_llm, 1)[0]
    (asked,) = [e["request"] for e in events if e["event"] == "permission"]
    assert asked["toolCall"]["kind"] == "edit"
    assert asked["toolCall"]["locations"] == [{"path": str(notes)}]
    # The proposal is made against the editor's buffer, not the disk.
    proposal = {
        "type": "diff",
        "path": str(notes),
        "oldText": "unsaved buffer\n",
        "newText": "saved buffer\n",
    }
    assert proposal in asked["toolCall"]["content"]
    writes = [(e["path"], e["content"]) for e in events if e["event"] == "write"]
    assert writes == [(str(notes), "saved buffer\n")]
    assert notes.read_text() == "on disk\n"
    done = updates(events, "tool_call_update")[-1]
    assert done["status"] == "completed"
    assert done["content"][0] == {
        "type": "diff",
        "path": str(notes),
        "oldText": "unsaved buffer\n",
        "newText": "saved buffer\n",
    }


async def test_a_form_question_returns_the_answer_chosen(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(tool_calls=[FakeToolCall("ask_user_question", ASK)]), Reply(text="ok"))
    events = await run_client(
        tmp_path,
        fake_env(tmp_path, fake_llm),
        cwd=str(workspace),
        caps=FORM,
        prompt="set up",
        answers={"q1": "unittest"},
    )
    (asked,) = [e["request"] for e in events if e["event"] == "elicitation"]
    assert asked["message"] == "Which runner?"
    choices = asked["requestedSchema"]["properties"]["q1"]["oneOf"]
    assert [c["const"] for c in choices] == ["pytest", "unittest"]
    assert "Which runner? → unittest" in tool_results(fake_llm, 1)[0]


async def test_without_forms_a_question_is_asked_in_the_chat(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("ask_user_question", ASK)]),
        Reply(text="Which runner: pytest or unittest?"),
    )
    events = await run_client(
        tmp_path, fake_env(tmp_path, fake_llm), cwd=str(workspace), prompt="set up", pick="first"
    )
    assert [e for e in events if e["event"] in ("permission", "elicitation")] == []
    result = tool_results(fake_llm, 1)[0]
    assert "user_not_reachable" in result and "The user answered" not in result
    assert "Which runner?" in result and "pytest; unittest" in result
    assert answer(events, "session/prompt")["stopReason"] == "end_turn"


async def test_cancel_closes_the_calls_and_load_replays_them_closed(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(
            tool_calls=[
                FakeToolCall("bash", {"command": "sleep 30"}),
                FakeToolCall("read_file", {"path": "notes.txt"}),
            ]
        )
    )
    env = fake_env(tmp_path, fake_llm)
    live = await run_client(
        tmp_path,
        env,
        cwd=str(workspace),
        prompt="go",
        pick="allow_once",
        cancelOn="tool_call_update",
    )
    assert answer(live, "session/prompt")["stopReason"] == "cancelled"
    ids = [u["toolCallId"] for u in updates(live, "tool_call")]
    assert len(ids) == 2 and closed(live) == dict.fromkeys(ids, "failed")

    session_id = answer(live, "session/new")["sessionId"]
    loaded = await run_client(tmp_path, env, cwd=str(workspace), load=session_id)
    assert [u["toolCallId"] for u in updates(loaded, "tool_call")] == ids
    assert closed(loaded) == dict.fromkeys(ids, "failed")
    replayed = updates(loaded, "user_message_chunk")
    assert replayed[0]["content"]["text"] == "go"

"""Offline replay: record a multi-step turn through `agentls serve` against the loopback fake
model, stop the fake, then `agentls replay --verify` re-runs the turn in a scratch copy."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from server.providers.messages import Finish, ModelRequest, ProviderError, TextDelta, Usage
from server.providers.replay import RecordedCall, ReplayProvider
from server.session_ids import valid_session_id
from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env
from tests.conftest import write_project_config


def agentls(tmp_path, *args):
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        env=server_env(tmp_path),  # no API key: replay must not need the model
        timeout=60,
    )


async def record(tmp_path, workspace, *replies: Reply) -> tuple[str, dict, AgentClient]:
    """One prompt through `agentls serve` on the fake model, which then stops: (session id,
    the prompt's result, the client)."""
    with FakeModelServer() as fake:
        llm = {"provider": "openai", "model": "gpt-5.5", "baseUrl": fake.openai_base_url}
        write_project_config(workspace, {"llm": {**llm, "maxRetries": 0}})
        fake.script(*replies)
        client = AgentClient()
        await client.start(server_env(tmp_path, OPENAI_API_KEY="test-key"))
        try:
            await client.initialize()
            session = await client.call("session/new", {"cwd": str(workspace)})
            result = await client.call(
                "session/prompt",
                {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]},
            )
        finally:
            await client.close()
    assert result["terminal"] == "completed", result
    return session["sessionId"], result, client


async def record_turn(tmp_path, workspace) -> tuple[str, str]:
    (workspace / "config.txt").write_text("retries = 3\n")
    (workspace / "notes.md").write_text("status: draft\n")
    session_id, result, client = await record(
        tmp_path,
        workspace,
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "config.txt"}, id="c_read")]),
        Reply(
            tool_calls=[
                FakeToolCall(
                    "write_file",
                    {"path": str(workspace / "out.txt"), "content": "retries=3\n"},
                    id="c_write",
                ),
                FakeToolCall(
                    "edit_file",
                    {"path": "notes.md", "old_string": "draft", "new_string": "final"},
                    id="c_edit",
                ),
            ]
        ),
        Reply(text="Copied the setting and marked the notes final."),
    )
    assert len(client.permission_requests) == 2  # write and edit asked; replay answers the same
    assert (workspace / "notes.md").read_text() == "status: final\n"
    return session_id, result["turnId"]


async def test_replay_verifies_offline_and_fails_where_the_workspace_differs(tmp_path, workspace):
    session_id, turn_id = await record_turn(tmp_path, workspace)

    passed = agentls(tmp_path, "replay", session_id, "--verify", "--json")
    assert passed.returncode == 0, passed.stderr
    report = json.loads(passed.stdout)
    assert report["verified"] is True and report["turnId"] == turn_id
    assert {f["name"]: f["passed"] for f in report["facts"]} == {
        "same_tool_calls": True,
        "no_new_tool_failures": True,
        "same_tool_results": True,
        "files_written_match": True,
        "read_only_wrote_nothing": None,
        "effects_reproduced": None,
        "same_terminal": True,
    }
    assert [c["name"] for c in report["replay"]["toolCalls"]] == [
        "read_file",
        "write_file",
        "edit_file",
    ]
    assert (workspace / "notes.md").read_text() == "status: final\n"  # the original is untouched

    stored = report["replaySessionId"]  # the replay's own trace: stored, exported, replayable
    assert valid_session_id(stored) and stored != session_id
    again = agentls(tmp_path, "replay", stored, "--workspace", str(workspace), "--verify")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.rstrip().endswith("verified: PASS")
    assert "\n  stored as       sess_" in again.stdout  # stored in its turn
    replayed_rows = agentls(tmp_path, "sessions", "export", stored).stdout.splitlines()
    assert {"prompt", "provider_request", "provider_response"} <= {
        json.loads(line).get("kind") for line in replayed_rows
    }

    trace = tmp_path / "trace.jsonl"
    assert agentls(tmp_path, "sessions", "export", session_id, "-o", str(trace)).returncode == 0
    kinds = {json.loads(line).get("kind") for line in trace.read_text().splitlines()}
    assert {"prompt", "update", "permission", "provider_request", "provider_response"} <= kinds
    from_file = agentls(tmp_path, "replay", str(trace), "--verify")
    assert from_file.returncode == 0, from_file.stdout + from_file.stderr
    assert from_file.stdout.rstrip().endswith("verified: PASS")

    (workspace / "config.txt").write_text("retries = 5\n")
    failed = agentls(tmp_path, "replay", turn_id, "--verify")
    assert failed.returncode == 1, failed.stderr
    lines = failed.stdout.splitlines()
    broken = [line for line in lines if line.startswith("  FAIL")]
    assert len(broken) == 1, failed.stdout
    assert broken[0].startswith(
        "  FAIL  tools that read the workspace returned the same: call 1 read_file (Read "
        "config.txt): the result differs"
    )
    assert "retries = 3" in broken[0] and "retries = 5" in broken[0]
    assert lines[-1] == "FAILED: 1 of 5 facts do not hold"


async def test_a_case_file_declares_more_facts_for_verify(tmp_path, workspace):
    session_id, _ = await record_turn(tmp_path, workspace)
    holds = tmp_path / "holds.json"
    holds.write_text(
        json.dumps(
            {
                "tools": ["read_file", "write_file", "edit_file"],
                "toolsInclude": ["read_file", "edit_file"],
                "changed": ["notes.md", "out.txt"],
                "unchanged": ["config.txt"],
                "writableOnly": ["*.md", "out.txt"],
                "answerContains": ["marked the notes final"],
            }
        )
    )
    passed = agentls(tmp_path, "replay", session_id, "--case", str(holds), "--json")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    report = json.loads(passed.stdout)
    declared = {f["name"]: f["status"] for f in report["facts"] if f["name"].startswith("case.")}
    assert declared == {
        "case.tools": "passed",
        "case.toolsInclude": "passed",
        "case.changed": "passed",
        "case.unchanged": "passed",
        "case.writableOnly": "passed",
        "case.answerContains": "passed",
    }

    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps(
            {
                "toolsInclude": ["edit_file", "read_file"],
                "unchanged": ["notes.md"],
                "writableOnly": ["*.md"],
                "answerContains": ["tests pass"],
            }
        )
    )
    failed = agentls(tmp_path, "replay", session_id, "--case", str(broken))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    lines = [line for line in failed.stdout.splitlines() if line.startswith("  FAIL")]
    assert lines == [
        "  FAIL  the tools called include edit_file, read_file: read_file is not called (in "
        "this order); called: read_file, write_file, edit_file",
        "  FAIL  notes.md did not change: notes.md changed",
        "  FAIL  only files matching *.md changed: out.txt changed, outside them",
        "  FAIL  the answer contains 'tests pass': the answer lacks 'tests pass'",
    ]
    assert failed.stdout.rstrip().endswith("FAILED: 4 of 9 facts do not hold")

    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"tool": ["read_file"]}))
    refused = agentls(tmp_path, "replay", session_id, "--case", str(wrong))
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"unknown keys in the case file {wrong}: tool" in refused.stderr


async def test_sessions_commands_print_for_people(tmp_path, workspace):
    session_id, _ = await record_turn(tmp_path, workspace)
    listing = agentls(tmp_path, "sessions", "list")
    assert listing.stdout.startswith(f"{session_id}  ") and listing.stdout.rstrip().endswith(
        f"  go  ({workspace})"
    )
    shown = agentls(tmp_path, "sessions", "show", session_id).stdout
    assert "> go" in shown and "  [read_file] Read config.txt" in shown
    assert "Copied the setting and marked the notes final." in shown
    assert "── completed (end_turn)" in shown
    found = agentls(tmp_path, "sessions", "search", "notes final", "--json")
    hits = json.loads(found.stdout)["hits"]
    assert [(h["sessionId"], h["role"]) for h in hits] == [(session_id, "assistant")]
    missing = agentls(tmp_path, "sessions", "show", "sess_nope")
    assert missing.returncode == 2 and "no stored session" in missing.stderr


async def test_the_replay_provider_plays_calls_in_order_then_refuses():
    calls = [
        RecordedCall([TextDelta("partial")], error="overloaded", status=529, retryable=True),
        RecordedCall([TextDelta("done"), Finish("end_turn", Usage(1, 1))]),
    ]
    provider = ReplayProvider(calls)
    request = ModelRequest(model="m", system="", messages=[])
    first = []
    with pytest.raises(ProviderError) as failed:
        async for event in provider.stream(request):
            first.append(event)
    second = [event async for event in provider.stream(request)]
    assert first == [TextDelta("partial")]
    assert (failed.value.status, failed.value.retryable) == (529, True)
    assert second == calls[1].events
    with pytest.raises(ProviderError, match="no recorded model call left"):
        async for _ in provider.stream(request):
            pass


async def test_the_replay_provider_gives_each_subagent_its_own_recorded_calls():
    calls = [
        RecordedCall([TextDelta("a1")], subagent="call_a"),
        RecordedCall([TextDelta("b1")], subagent="call_b"),
        RecordedCall([TextDelta("top")]),
        RecordedCall([TextDelta("a2")], subagent="call_a"),
    ]
    asking: list[str | None] = ["call_b", "call_a", "call_a", None]
    provider = ReplayProvider(calls, asking=lambda: asking[0])
    request = ModelRequest(model="m", system="", messages=[])
    played = []
    while asking:
        played += [e.text async for e in provider.stream(request)]
        asking.pop(0)
    assert played == ["b1", "a1", "a2", "top"]


async def record_subagent_turn(tmp_path, workspace) -> tuple[str, subprocess.CompletedProcess]:
    """A turn that hands one read to an explorer subagent: (session id, its export)."""
    (workspace / "config.txt").write_text("retries = 3\n")
    task = {"description": "look", "prompt": "read config.txt", "subagent_type": "explorer"}
    session_id, _, _ = await record(
        tmp_path,
        workspace,
        Reply(tool_calls=[FakeToolCall("task", task, id="call_task")]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "config.txt"}, id="c_read")]),
        Reply(text="retries is 3"),
        Reply(text="The subagent found retries = 3."),
    )
    return session_id, agentls(tmp_path, "sessions", "export", session_id)


async def test_a_subagents_model_calls_are_traced_with_its_id_and_replay_with_it(
    tmp_path, workspace
):
    session_id, exported = await record_subagent_turn(tmp_path, workspace)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    tags = [
        (r["kind"], r["data"].get("subagent"))
        for r in rows
        if r.get("kind") in ("provider_request", "provider_response")
    ]
    sub = {"id": "call_task", "profile": "explorer", "parentToolCallId": "call_task"}
    assert tags == [
        ("provider_request", None),
        ("provider_response", None),
        ("provider_request", sub),
        ("provider_response", sub),
        ("provider_request", sub),
        ("provider_response", sub),
        ("provider_request", None),
        ("provider_response", None),
    ]
    replayed = agentls(tmp_path, "replay", session_id, "--verify")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert replayed.stdout.rstrip().endswith("verified: PASS")


def text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


async def test_subagents_that_ran_at_once_verify_whatever_order_their_calls_interleave(
    tmp_path, workspace
):
    """Two subagents run at once; in the original the second one's read came first. A replay
    interleaves them as its own scheduling goes: the calls still verify as the same."""
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    b_done = threading.Event()

    def route(body: dict) -> Reply:
        users = [text_of(m) for m in body["messages"] if m["role"] == "user"]
        first = users[0] if users else ""
        answered = any(m["role"] == "tool" for m in body["messages"])
        if "SUB-A" in first:
            if answered:
                return Reply(text="a.txt says alpha.")
            b_done.wait(60)  # the second subagent's read goes first in the original
            return Reply(tool_calls=[FakeToolCall("read_file", {"path": "a.txt"}, id="r_a")])
        if "SUB-B" in first:
            if answered:
                b_done.set()
                return Reply(text="b.txt says beta.")
            return Reply(tool_calls=[FakeToolCall("read_file", {"path": "b.txt"}, id="r_b")])
        if answered:
            return Reply(text="alpha and beta.")
        tasks = [
            FakeToolCall(
                "task",
                {"description": f"read {n}", "prompt": f"SUB-{n.upper()} read {n}.txt",
                 "subagent_type": "explorer"},
                id=f"call_{n}",
            )
            for n in ("a", "b")
        ]
        return Reply(tool_calls=tasks)

    session_id, _, client = await record(tmp_path, workspace, *[route] * 6)
    reads = [
        u["update"]["toolCallId"]
        for u in client.updates
        if u["update"]["kind"] == "tool_call" and u["update"].get("parentToolCallId")
    ]
    assert reads == ["call_b/r_b", "call_a/r_a"]
    replayed = agentls(tmp_path, "replay", session_id, "--verify")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert replayed.stdout.rstrip().endswith("verified: PASS")


async def test_the_trace_writes_a_system_prompt_once_per_agent(tmp_path, workspace):
    session_id, exported = await record_subagent_turn(tmp_path, workspace)
    requests = [
        r["data"] for r in map(json.loads, exported.stdout.splitlines())
        if r.get("kind") == "provider_request"
    ]
    own = [r for r in requests if "subagent" not in r]
    sub = [r for r in requests if "subagent" in r]
    assert len(own) == 2 and len(sub) == 2
    assert own[0]["system"] and "unchanged" not in own[0]
    assert sub[0]["system"] and sub[0]["system"] != own[0]["system"]  # its own, in full
    for later in (own[1], sub[1]):
        assert "system" not in later and set(later["unchanged"]) >= {"system", "tools"}
    replayed = agentls(tmp_path, "replay", session_id, "--verify")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr

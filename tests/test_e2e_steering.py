"""What each model call of a running turn is built from: `session/set_model` and `/model` take
effect on the next call, `session/steer` text joins the next request (over real stdio with the
loopback fake model), and every call gets a fresh, never stored, turn context."""

from __future__ import annotations

import asyncio
import os
import subprocess

import pytest

from server.agent.context import UNKNOWN, GitState, git_state
from server.providers.messages import is_turn_context
from server.providers.scripted import ScriptedReply
from server.testing.fake_llm import FakeToolCall, Reply
from server.tools.git_env import run_bounded
from tests.agent_client import open_session, prompt
from tests.test_e2e_subagents import Harness, results


def slow_step() -> Reply:
    """A first step that streams for a while, then calls a tool that needs no permission."""
    return Reply(
        text=" ".join(["looking"] * 6), chunk_delay=0.1, tool_calls=[FakeToolCall("list_dir", {})]
    )


def updates_of(client, kind):
    return [u["update"] for u in client.updates if u["update"]["kind"] == kind]


async def test_set_model_during_a_turn_changes_the_next_request(tmp_path, workspace, fake_llm):
    fake_llm.script(slow_step(), Reply(text="done"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        turn = asyncio.create_task(client.call("session/prompt", prompt(session_id, "go")))
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk")
        answer = await client.call(
            "session/set_model", {"sessionId": session_id, "modelId": "gpt-5.5-mini"}
        )
        result = await asyncio.wait_for(turn, 60)
    finally:
        await client.close()
    assert answer == {}
    assert result["terminal"] == "completed", result
    assert [r.body["model"] for r in fake_llm.requests] == ["gpt-5.5", "gpt-5.5-mini"]
    assert updates_of(client, "model_switched") == [
        {"kind": "model_switched", "model": "gpt-5.5-mini", "reason": "set_model"}
    ]
    kinds = [u["update"]["kind"] for u in client.updates]
    assert kinds.index("model_switched") == kinds.index("step_finish") + 1, (
        "announced when it takes effect: right before the second model call"
    )


async def test_steer_text_appears_in_the_next_request(tmp_path, workspace, fake_llm):
    fake_llm.script(slow_step(), Reply(text="ok, tabs"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        turn = asyncio.create_task(client.call("session/prompt", prompt(session_id, "format")))
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk")
        queued = await client.call("session/steer", prompt(session_id, "use tabs"))
        result = await asyncio.wait_for(turn, 60)
    finally:
        await client.close()
    assert queued == {"queued": True}
    assert result["terminal"] == "completed", result
    first, second = (r.body["messages"] for r in fake_llm.requests)
    users = [m["content"] for m in second if m["role"] == "user"]
    assert "use tabs" in users and "use tabs" not in [m.get("content") for m in first]
    roles = [m["role"] for m in second]
    steer_at = users.index("use tabs")
    assert roles.index("tool") < [i for i, r in enumerate(roles) if r == "user"][steer_at], (
        "the steer follows the tool result it arrived after"
    )
    assert updates_of(client, "user_message_chunk") == [
        {"kind": "user_message_chunk", "text": "use tabs"}
    ]


async def test_model_prompt_command(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="explained"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        switched = await client.call("session/prompt", prompt(session_id, "/model gpt-4.1"))
        shown = await client.call("session/prompt", prompt(session_id, "/model"))
        ran = await client.call("session/prompt", prompt(session_id, "/model gpt-5.5 explain x"))
    finally:
        await client.close()
    assert switched["terminal"] == shown["terminal"] == ran["terminal"] == "completed"
    assert [r.body["model"] for r in fake_llm.requests] == ["gpt-5.5"], "only the last one asks"
    last_user = next(m for m in fake_llm.requests[0].body["messages"] if m["role"] == "user")
    assert last_user["content"] in ("explain x", [{"type": "text", "text": "explain x"}])
    assert [(u["model"], u["reason"]) for u in updates_of(client, "model_switched")] == [
        ("gpt-4.1", "/model"),
        ("gpt-5.5", "/model"),
    ]
    by_turn = {
        turn: "".join(
            u["update"]["text"]
            for u in client.updates
            if u["turnId"] == turn and u["update"]["kind"] == "agent_message_chunk"
        )
        for turn in (switched["turnId"], shown["turnId"])
    }
    assert by_turn == {
        switched["turnId"]: "Model: gpt-4.1. Switch with /model <id>.",
        shown["turnId"]: "Model: gpt-4.1. Switch with /model <id>.",
    }


# -- the per-call turn context ------------------------------------------------------------------


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


async def test_every_call_gets_a_fresh_turn_context_that_is_never_stored(tmp_path):
    def reply(request):
        if not results(request):
            return ScriptedReply(tool_calls=[("write_file", {"path": "new.txt", "content": "x"})])
        return ScriptedReply(text="done")

    h = Harness(tmp_path, reply)
    git(h.workspace, "init", "-q", "-b", "main")
    (h.workspace / "a.txt").write_text("a")
    git(h.workspace, "add", "a.txt")
    git(h.workspace, "commit", "-qm", "first")
    await h.open()
    h.handle.permissions.mode = "acceptEdits"
    await h.prompt("add a file")
    first, second = h.provider.requests
    sha = first.messages[-1].text.split("main@")[1][:7]
    assert first.messages[-1].text == (
        f"<turn-context>\ncwd: {h.workspace}\nsession: {h.session_id}\n"
        f"git: main@{sha} (clean)\n</turn-context>"
    )
    assert f"git: main@{sha} (1 uncommitted)" in second.messages[-1].text
    for request in (first, second):
        assert [is_turn_context(m) for m in request.messages].count(True) == 1
        assert request.stable_prefix == len(request.messages) - 1
    assert not any(is_turn_context(m) for m in h.handle.history)


async def test_git_status_runs_again_only_after_a_step_that_may_change_the_workspace(
    tmp_path, monkeypatch
):
    """Reads and searches change nothing, so the state read for the turn still holds after
    them; a command (or an edit) may have changed it, so the next call reads it again."""
    bin_dir, log = tmp_path / "bin", tmp_path / "git.log"
    bin_dir.mkdir()
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    steps = [
        ("read_file", {"path": "a.txt"}),
        ("grep", {"pattern": "a"}),
        ("bash", {"command": "echo b > b.txt"}),
    ]

    def reply(request):
        done = len(results(request))
        return (
            ScriptedReply(tool_calls=[steps[done]])
            if done < len(steps)
            else ScriptedReply(text="done")
        )

    h = Harness(tmp_path, reply)
    git(h.workspace, "init", "-q", "-b", "main")
    (h.workspace / "a.txt").write_text("a")
    git(h.workspace, "add", "a.txt")
    git(h.workspace, "commit", "-qm", "first")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    await h.open()
    h.handle.permissions.mode = "bypassPermissions"
    await h.prompt("look, then change something")

    def status_runs() -> int:
        return sum(line.startswith("--no-pager status") for line in log.read_text().splitlines())

    contexts = [r.messages[-1].text for r in h.provider.requests]
    assert len(contexts) == 4
    assert status_runs() == 2, "once for the turn, once after the command"
    assert ["(clean)" in c for c in contexts] == [True, True, True, False]
    assert "(1 uncommitted)" in contexts[3]
    await h.prompt("again")
    assert status_runs() == 3, "each turn reads it afresh"


async def test_outside_a_repository(tmp_path):
    h = await Harness(tmp_path, lambda request: ScriptedReply(text="hi")).open()
    await h.prompt("hi")
    assert "git: not a repository" in h.provider.requests[0].messages[-1].text
    assert git_state(tmp_path / "does-not-exist") == UNKNOWN, "git could not even start"


def test_git_state_descriptions(tmp_path):
    assert git_state(tmp_path) is None
    assert GitState("main", "abc1234", 0).describe() == "main@abc1234 (clean)"
    assert GitState("main", "abc1234", 3).describe() == "main@abc1234 (3 uncommitted)"
    assert GitState("main", "abc1234", None).describe() == "main@abc1234 (status unknown)"
    assert UNKNOWN.describe() == "status unknown"
    git(tmp_path, "init", "-q", "-b", "trunk")
    assert git_state(tmp_path) == GitState("trunk", "(no commits)", 0)


def test_a_bounded_git_run_gives_its_output_and_is_killed_at_its_deadline(tmp_path):
    env = dict(os.environ)
    done = run_bounded(
        ["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path, env=env, timeout_s=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, b"out\n", b"err\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run_bounded(["sleep", "600"], cwd=tmp_path, env=env, timeout_s=0.2)


async def test_a_steer_with_a_selection_gives_it_as_context(tmp_path, workspace, fake_llm):
    fake_llm.script(slow_step(), Reply(text="ok"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    selection = {
        "type": "resource",
        "uri": (workspace / "app.py").as_uri(),
        "text": "x = 1",
        "range": {"start": {"line": 2}, "end": {"line": 3}},
        "context": "selection",
    }
    try:
        turn = asyncio.create_task(client.call("session/prompt", prompt(session_id, "go")))
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk")
        steer = {"sessionId": session_id, "prompt": [{"type": "text", "text": "this"}, selection]}
        await client.call("session/steer", steer)
        await asyncio.wait_for(turn, 60)
    finally:
        await client.close()
    users = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "user"]
    assert 'this\n<context kind="selection" path="app.py" lines="3">\nx = 1\n</context>' in users

"""Agent features as a user meets them over JSON-RPC (real stdio, the loopback fake model):
plan mode's tools, skill arguments, the task tool's default profile, the question timeout and
the web fetch timeout and domains from the config."""

from __future__ import annotations

import asyncio
import json

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import open_session, prompt
from tests.test_e2e_skills import add_skill


def offered(fake_llm, index: int = 0) -> set[str]:
    return {t["function"]["name"] for t in fake_llm.requests[index].body.get("tools", [])}


def tool_results(fake_llm, index: int) -> list[str]:
    return [m["content"] for m in fake_llm.requests[index].body["messages"] if m["role"] == "tool"]


def last_user_text(fake_llm, index: int) -> str:
    users = [m for m in fake_llm.requests[index].body["messages"] if m["role"] == "user"]
    content = users[0]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


async def test_plan_mode_offers_only_local_read_only_tools(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("web_fetch", {"url": "https://example.com/"})]),
        Reply(text="planned"),
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        await client.call("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
        result = await client.call("session/prompt", prompt(session_id, "plan it"))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    tools = offered(fake_llm)
    assert {"read_file", "grep", "glob"} <= tools
    assert not tools & {"web_fetch", "web_search", "write_file", "edit_file"}, tools
    assert client.permission_requests == []
    [refused] = tool_results(fake_llm, 1)
    assert "plan mode" in refused


SUMMARIZE = """---
name: summarize
description: Summarize files.
---
First: $1. Second: $2. Count me: $3. All: $ARGUMENTS
"""


async def test_skill_arguments_split_shell_style(tmp_path, workspace, fake_llm):
    add_skill(workspace, "summarize", SUMMARIZE)
    fake_llm.script(Reply(text="ok"), Reply(text="ok"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        await client.call("session/prompt", prompt(session_id, '/summarize a.txt "b c"'))
        await client.call("session/prompt", prompt(session_id, "/summarize it's broken"))
    finally:
        await client.close()
    assert 'First: a.txt. Second: b c. Count me: $3. All: a.txt "b c"' in last_user_text(
        fake_llm, 0
    )
    # Unbalanced quotes: split on whitespace rather than fail.
    assert "First: it's. Second: broken." in json.dumps(fake_llm.requests[1].body)


async def test_task_without_a_type_runs_the_executor(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("task", {"description": "count", "prompt": "count"})]),
        Reply(text="there are 3"),
        Reply(text="done"),
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        result = await client.call("session/prompt", prompt(session_id, "delegate"))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    subagents = [u["update"] for u in client.updates if u["update"]["kind"] == "subagent"]
    assert subagents and subagents[0]["profile"] == "executor", subagents
    assert "there are 3" in tool_results(fake_llm, 2)[0]


async def test_the_question_timeout_comes_from_the_config(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("ask_user_question", {"question": "Tabs?"})]),
        Reply(text="ok"),
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm, questions={"timeout": 2})

    async def never(params):
        await asyncio.sleep(600)

    client.on_question = never
    try:
        result = await asyncio.wait_for(
            client.call("session/prompt", prompt(session_id, "ask")), 300
        )
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    [answer] = tool_results(fake_llm, 1)
    assert '"error": "user_timeout"' in answer and "within 2 s" in answer, answer


class Silent:
    """A local HTTP server that accepts connections and never answers."""

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.hold, "127.0.0.1", 0)
        self.held: list[asyncio.StreamWriter] = []
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/"

    async def hold(self, reader, writer) -> None:
        self.held.append(writer)

    async def __aexit__(self, *exc) -> None:
        for writer in self.held:
            writer.close()
        self.server.close()


@pytest.mark.parametrize(("timeout", "shown"), [("2s", "2 s"), ("1500ms", "1.5 s")])
async def test_the_fetch_timeout_takes_a_unit(tmp_path, workspace, fake_llm, timeout, shown):
    async with Silent() as url:
        fake_llm.script(
            Reply(tool_calls=[FakeToolCall("web_fetch", {"url": url})]), Reply(text="ok")
        )
        user = {"webFetch": {"allowPrivateHosts": True, "timeout": timeout}}
        client, session_id = await open_session(tmp_path, workspace, fake_llm, user=user)
        try:
            result = await client.call("session/prompt", prompt(session_id, "fetch"))
        finally:
            await client.close()
    assert result["terminal"] == "completed", result
    [answer] = tool_results(fake_llm, 1)
    assert "timed out" in answer.lower() and shown in answer, answer


async def test_an_absurd_fetch_timeout_is_refused(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="ok"))
    user = {"webFetch": {"timeout": 15000}}
    client, session_id = await open_session(tmp_path, workspace, fake_llm, user=user)
    try:
        await client.call("session/prompt", prompt(session_id, "hi"))
    finally:
        await client.close()
    log = (tmp_path / "data" / "logs" / "serve.log").read_text()
    assert "webFetch.timeout" in log and "15000" in log, log[-2000:]


async def test_a_project_may_narrow_the_fetch_domains(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("web_fetch", {"url": "https://example.com/"})]),
        Reply(text="ok"),
    )
    client, session_id = await open_session(
        tmp_path, workspace, fake_llm, webFetch={"allowedDomains": ["docs.python.org"]}
    )
    try:
        await client.call("session/prompt", prompt(session_id, "fetch"))
    finally:
        await client.close()
    [answer] = tool_results(fake_llm, 1)
    assert "not in webFetch.allowedDomains" in answer and "docs.python.org" in answer, answer


def todos(n: int) -> dict:
    return {
        "todos": [{"id": str(i), "content": f"step {i}", "status": "pending"} for i in range(n)]
    }


async def test_the_todo_list_is_capped(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("todo_write", todos(6))]),
        Reply(tool_calls=[FakeToolCall("todo_write", todos(5))]),
        Reply(text="ok"),
    )
    client, session_id = await open_session(
        tmp_path, workspace, fake_llm, todos={"maxPerSession": 5}
    )
    try:
        await client.call("session/prompt", prompt(session_id, "plan"))
    finally:
        await client.close()
    refused = tool_results(fake_llm, 1)[0]
    assert "todos.maxPerSession" in refused and "5" in refused, refused
    plans = [u["update"] for u in client.updates if u["update"]["kind"] == "plan"]
    assert [len(p["entries"]) for p in plans] == [5]


async def test_todo_commands_show_and_clear_the_list(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(tool_calls=[FakeToolCall("todo_write", todos(2))]), Reply(text="ok"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        await client.call("session/prompt", prompt(session_id, "plan"))
        client.updates.clear()
        shown = await client.call("session/prompt", prompt(session_id, "/todo"))
        listing = "".join(u["update"].get("text", "") for u in client.updates)
        client.updates.clear()
        cleared = await client.call("session/prompt", prompt(session_id, "/todo clear"))
        plans = [u["update"] for u in client.updates if u["update"]["kind"] == "plan"]
    finally:
        await client.close()
    assert (shown["terminal"], cleared["terminal"]) == ("completed", "completed")
    assert len(fake_llm.requests) == 2, "the commands call no model"
    assert "step 0" in listing and "step 1" in listing and "pending" in listing, listing
    assert plans == [{"kind": "plan", "entries": []}]


@pytest.mark.parametrize(
    ("command", "shown"), [("/todo", "No todos."), ("/model", "Model: scripted")]
)
def test_commands_answer_in_print_mode_without_a_model(tmp_path, workspace, command, shown):
    import subprocess
    import sys

    from tests.agent_client import server_env

    proc = subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", command, "--output-format", "json"],
        capture_output=True,
        cwd=workspace,
        env=server_env(tmp_path, AGENTLS_PROVIDER="scripted"),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["result"].startswith(shown)


async def test_permission_requests_say_how_risky_the_call_is(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("a\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "rm notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "new.txt", "content": "x"})]),
        Reply(text="ok"),
    )
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        await client.call("session/prompt", prompt(session_id, "go"))
    finally:
        await client.close()
    risks = [(r["toolCall"]["name"], r["toolCall"]["risk"]) for r in client.permission_requests]
    assert risks == [("bash", "high"), ("write_file", "medium")], risks

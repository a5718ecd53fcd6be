"""Options a user of the seed agent already writes, through `agentls serve` against the strict
fake model: each is honoured, or a warning names it where the user sees it."""

from __future__ import annotations

import json

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import FAKE_MODELS, AgentClient, new_session, prompt, server_env
from tests.conftest import write_project_config
from tests.test_e2e_skills import add_skill


async def serve(tmp_path, workspace, fake_llm, provider: str = "openai", **llm) -> AgentClient:
    model, key, url = FAKE_MODELS[provider]
    settings = {"provider": provider, "model": model, "baseUrl": url(fake_llm), "maxRetries": 0}
    write_project_config(workspace, {"llm": {**settings, **llm}})
    client = AgentClient()
    await client.start(server_env(tmp_path, **{key: "test-key"}))
    await client.initialize()
    return client


def log_text(tmp_path) -> str:
    return (tmp_path / "data" / "logs" / "serve.log").read_text()


# -- 11. one thinking-budget rule -------------------------------------------------------------

BUDGETS = {
    "flag or llm.thinkingBudget": {"thinkingBudget": 8000},
    "llm.providerOptions.thinking": {
        "providerOptions": {"thinking": {"type": "enabled", "budgetTokens": 8000}}
    },
    "llm.providerOptions.anthropic.thinking": {
        "providerOptions": {"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 8000}}}
    },
}


@pytest.mark.parametrize("llm", BUDGETS.values(), ids=BUDGETS.keys())
async def test_a_configured_thinking_budget_leaves_room_for_the_answer(
    tmp_path, workspace, fake_llm, llm
) -> None:
    fake_llm.script(Reply(text="ok"))
    client = await serve(
        tmp_path, workspace, fake_llm, "anthropic", model="claude-sonnet-4-5", **llm
    )
    try:
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "think"))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result.get("error")
    body = fake_llm.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert body["max_tokens"] == 8000 + 8192


# -- 9. a skill's modelHints.providerOptions ----------------------------------------------------

HINTED = """---
name: deep
description: Work it through
modelHints:
  providerOptions:
    maxTokens: 2222
  temperatureHint: 0.1
---
Work through $ARGUMENTS.
"""


async def test_a_skills_model_hints_options_apply_and_unknown_hints_are_named(
    tmp_path, workspace, fake_llm
) -> None:
    add_skill(workspace, "deep", HINTED)
    fake_llm.script(Reply(text="done"), Reply(text="plain"))
    client = await serve(tmp_path, workspace, fake_llm, model="gpt-4.1")
    try:
        session_id = await new_session(client, workspace)
        listed = await client.call("skills/list", {"cwd": str(workspace)})
        first = await client.call("session/prompt", prompt(session_id, "/deep the plan"))
        second = await client.call("session/prompt", prompt(session_id, "and now?"))
    finally:
        await client.close()
    assert first["terminal"] == second["terminal"] == "completed"
    assert [r.body["max_tokens"] for r in fake_llm.requests] == [2222, 4096]
    [warning] = listed["warnings"]
    assert warning["path"].endswith("deep/SKILL.md")
    assert "modelHints.temperatureHint" in warning["message"]
    assert "modelHints.temperatureHint" in log_text(tmp_path)


# -- 10. todos.persist: false -------------------------------------------------------------------

PLAN = {"todos": [{"id": "1", "content": "step one", "status": "pending"}]}


@pytest.mark.parametrize("persist", [True, False])
async def test_todos_persist_false_keeps_the_list_out_of_the_stored_session(
    tmp_path, workspace, fake_llm, persist
) -> None:
    fake_llm.script(Reply(tool_calls=[FakeToolCall("todo_write", PLAN)]), Reply(text="planned"))
    client = await serve(tmp_path, workspace, fake_llm)
    config = workspace / ".agentls" / "config.json"
    config.write_text(json.dumps(json.loads(config.read_text()) | {"todos": {"persist": persist}}))
    try:
        session_id = await new_session(client, workspace)
        planned = await client.call("session/prompt", prompt(session_id, "plan"))
    finally:
        await client.close()
    assert planned["terminal"] == "completed", planned.get("error")
    again = await serve(tmp_path, workspace, fake_llm)
    try:
        await again.call("session/load", {"sessionId": session_id})
        again.updates.clear()
        shown = await again.call("session/prompt", prompt(session_id, "/todo"))
    finally:
        await again.close()
    assert shown["terminal"] == "completed"
    listing = "".join(u["update"].get("text", "") for u in again.updates)
    assert ("step one" in listing) is persist, listing
    assert ("No todos." in listing) is not persist, listing


# -- 14. webFetch.timeout's warning, once -------------------------------------------------------


async def test_a_bad_web_fetch_timeout_is_named_once(tmp_path, workspace, fake_llm) -> None:
    user = tmp_path / "config" / "agentls" / "config.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"webFetch": {"timeout": "forever"}}))
    client = await serve(tmp_path, workspace, fake_llm)
    try:
        for _ in range(2):
            await new_session(client, workspace)
    finally:
        await client.close()
    assert log_text(tmp_path).count("webFetch.timeout 'forever'") == 1

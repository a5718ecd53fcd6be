"""`agentls acp` for an editor that shows updates between turns (it says so with
`clientCapabilities._meta.agentls.reportTurns`): a turn that starts a background subagent is
answered at once, and the subagent's report reaches the model in a turn of its own, whose
updates (the report, the subagent's cards, the model's answer) arrive after that answer.
Through the ACP SDK's own client over stdio, against the strict fake model."""

from __future__ import annotations

import asyncio

from acp import schema

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_acp_frontend import Editor, agentls_acp, fake_env, text
from tests.test_e2e_background_subagents import Router, background_task, text_of

REPORT_TURNS = schema.ClientCapabilities(field_meta={"agentls": {"reportTurns": True}})


def said(updates: list) -> str:
    return "".join(u.content.text for u in updates if u.session_update == "agent_message_chunk")


async def test_a_background_report_arrives_as_a_turn_of_its_own(tmp_path, workspace, fake_llm):
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("A = 1\n")
    router = Router(
        parent=[
            Reply(tool_calls=[background_task()]),
            Reply(text="Counting in the background."),
            Reply(text="The count is in: 1 Python file."),
        ],
        sub=[
            Reply(tool_calls=[FakeToolCall("glob", {"pattern": "src/*.py"}, id="g1")]),
            Reply(text="There is 1 Python file under src/."),
        ],
    )
    fake_llm.script(*[router] * 6)
    editor = Editor()
    try:
        async with agentls_acp(
            tmp_path, fake_env(tmp_path, fake_llm), editor, caps=REPORT_TURNS
        ) as (conn, init):
            assert init.agent_capabilities.field_meta["agentls"]["reportTurns"] is True
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            turn = conn.prompt(session_id=session.session_id, prompt=text("count them"))
            answered = await asyncio.wait_for(turn, 90)  # the subagent waits for `release`
            assert answered.stop_reason == "end_turn"
            before = len(editor.updates)
            router.release.set()
            while not said(editor.updates).endswith("The count is in: 1 Python file."):
                await asyncio.wait_for(editor.changed.wait(), 90)
                editor.changed.clear()
            after = editor.updates[before:]
    finally:
        router.release.set()

    assert said(editor.updates[:before]) == "Counting in the background."
    reported = [u for u in after if u.session_update == "user_message_chunk"]
    assert len(reported) == 1
    assert "There is 1 Python file under src/." in reported[0].content.text
    closed = {
        u.tool_call_id: u.status
        for u in after
        if u.session_update == "tool_call_update" and u.status in ("completed", "failed")
    }
    assert closed == {"call_bg/g1": "completed"}
    assert said(after) == "The count is in: 1 Python file."
    told = "\n".join(text_of(m) for m in router.parent_bodies[2]["messages"])
    assert "There is 1 Python file under src/." in told
    assert fake_llm.refusals == []

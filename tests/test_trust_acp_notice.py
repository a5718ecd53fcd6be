"""`agentls acp` tells the editor's user, once per session, that the folder is untrusted and what
its project files asked for that was ignored, as agent text the ACP client renders (Zed shows it
in the thread), with how to trust the folder. Real process, the ACP SDK's own client."""

from __future__ import annotations

from server.testing.fake_llm import Reply
from tests.agent_client import server_env
from tests.test_acp_frontend import Editor, agentls_acp, text
from tests.trust_fixture import clone

BYPASS = {"permissions": {"mode": "bypassPermissions"}}


def chunks(editor: Editor) -> list:
    return [u for u in editor.updates if u.session_update == "agent_message_chunk"]


async def test_acp_shows_the_untrusted_folder_notice_once(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, project=BYPASS)
    fake_llm.script(Reply(text="first answer"), Reply(text="second answer"))
    editor = Editor()
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    async with agentls_acp(tmp_path, env, editor) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("one"))
        await conn.prompt(session_id=session.session_id, prompt=text("two"))
    notices = [c for c in chunks(editor) if (c.field_meta or {}).get("agentls")]
    assert len(notices) == 1, editor.text()
    [notice] = notices
    assert notice.field_meta["agentls"]["workspaceTrust"] == {
        "kind": "workspace_trust",
        "trusted": False,
        "cwd": str(workspace),
        "ignored": ["permissions.mode (bypassPermissions)"],
    }
    words = notice.content.text
    assert "not trusted" in words and "permissions.mode (bypassPermissions)" in words
    assert "trustedProjects" in words and str(workspace) in words and "--trust" in words
    assert "config.json" in words
    assert chunks(editor)[0] is notice
    assert editor.text().endswith("first answersecond answer")


async def test_acp_shows_no_notice_in_a_trusted_folder(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, project=BYPASS)
    fake_llm.script(Reply(text="answer"))
    editor = Editor()
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    async with agentls_acp(tmp_path, env, editor) as (conn, _init):
        session = await conn.new_session(
            cwd=str(workspace), mcp_servers=[], agentls={"workspaceTrusted": True}
        )
        await conn.prompt(session_id=session.session_id, prompt=text("one"))
    assert editor.text() == "answer"

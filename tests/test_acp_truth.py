"""What `agentls acp` shows an editor is what happened: questions, cancel, diffs, tool output,
file requests, plans, modes, failures, models. Through the ACP SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from acp import schema

from protocol.updates import Location, ToolCall
from server.frontends.acp_tools import tool_call_start
from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_acp_frontend import ASK, Editor, agentls_acp, allow, fake_env, text, tool_results
from tests.test_acp_fs import FS, BufferEditor

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def calls(editor: Editor, kind: str = "tool_call") -> list[Any]:
    return [u for u in editor.updates if u.session_update == kind]


def closing(updates: list[Any]) -> dict[str, str]:
    return {
        u.tool_call_id: u.status
        for u in updates
        if u.session_update == "tool_call_update" and u.status in ("completed", "failed")
    }


async def test_a_question_without_a_form_is_never_answered_by_a_plain_accept(
    tmp_path, workspace, fake_llm
):
    fake_llm.script(Reply(tool_calls=[FakeToolCall("ask_user_question", ASK)]), Reply(text="ok"))
    editor = Editor()  # no elicitation.form; accepts whatever it is asked, as acpx's "y" does
    editor.on_permission = lambda r: allow(r.options[0].option_id)
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("set up"))

    result = tool_results(fake_llm, 1)[0]
    assert "user_not_reachable" in result and "The user answered" not in result
    assert "Which runner?" in result and "pytest" in result and "unittest" in result
    assert editor.permissions == []


async def test_cancel_closes_every_tool_call_live_and_on_load(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    slow = FakeToolCall("bash", {"command": "sleep 30"})
    read = FakeToolCall("read_file", {"path": "notes.txt"})
    fake_llm.script(Reply(tool_calls=[slow, read]))
    env = fake_env(tmp_path, fake_llm)
    editor = Editor()
    async with agentls_acp(tmp_path, env, editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=text("go")))
        await editor.wait_for("tool_call_update")
        await conn.cancel(session_id=session.session_id)
        assert (await asyncio.wait_for(turn, 60)).stop_reason == "cancelled"
        before_the_answer = list(editor.updates)
    ids = [c.tool_call_id for c in calls(editor)]
    assert len(ids) == 2
    assert closing(before_the_answer) == dict.fromkeys(ids, "failed")

    loaded = Editor()
    async with agentls_acp(tmp_path, env, loaded) as (conn, _):
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
    assert [c.tool_call_id for c in calls(loaded)] == ids
    assert closing(loaded.updates) == dict.fromkeys(ids, "failed")


async def test_edits_and_writes_show_the_proposed_diff_before_approval(
    tmp_path, workspace, fake_llm
):
    (workspace / "notes.txt").write_text("hello\nworld\n")
    edit = {"path": "notes.txt", "old_string": "hello", "new_string": "bye"}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("edit_file", edit)]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "new.txt", "content": "x\n"})]),
        Reply(text="done"),
    )
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("edit"))

    notes, new = str(workspace / "notes.txt"), str(workspace / "new.txt")
    diffs = [
        {"type": "diff", "path": notes, "oldText": "hello\nworld\n", "newText": "bye\nworld\n"},
        {"type": "diff", "path": new, "newText": "x\n"},
    ]
    for call, asked, diff in zip(calls(editor), editor.permissions, diffs, strict=True):
        for shown in (call, asked.tool_call):
            wire = shown.model_dump(by_alias=True, exclude_none=True)
            assert wire["kind"] == "edit"
            assert wire["locations"] == [{"path": diff["path"]}]
            assert diff in wire["content"]
    assert (workspace / "notes.txt").read_text() == "bye\nworld\n"


async def test_tool_output_is_readable_and_raw_output_is_the_result(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo out-put"})]),
        Reply(text="done"),
    )
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("look"))

    read, ran = [u for u in calls(editor, "tool_call_update") if u.status == "completed"]
    shown = read.content[0].content.text
    assert "hello" in shown and "totalLines" not in shown and "{" not in shown
    assert read.raw_output["totalLines"] == 1 and "hello" in read.raw_output["content"]
    assert (
        "out-put" in ran.content[0].content.text and "exitCode" not in ran.content[0].content.text
    )
    assert ran.raw_output["exitCode"] == 0 and "out-put" in ran.raw_output["output"]


class OrderedEditor(BufferEditor):
    """Records, at each `fs/*` request, which tool calls it had been told about."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__(buffers)
        self.known_at_request: list[int] = []

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any):
        self.known_at_request.append(len(calls(self)))
        return await super().read_text_file(session_id, path, **kwargs)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        self.known_at_request.append(len(calls(self)))
        return await super().write_text_file(session_id, path, content, **kwargs)


async def test_file_requests_come_after_their_tool_call(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("on disk\n")
    notes = str(workspace / "notes.txt")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "notes.txt", "content": "v2\n"})]),
        Reply(text="done"),
    )
    editor = OrderedEditor({notes: "buffer\n"})
    env = fake_env(tmp_path, fake_llm, AGENTLS_PERMISSION_MODE="acceptEdits")
    async with agentls_acp(tmp_path, env, editor, caps=FS) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("go"))
    # read_file: one read; write_file: a read of the old text, then the write
    assert editor.known_at_request == [1, 2, 2]


class EmptyAnswers(BufferEditor):
    """Answers every read with "" (a file it has no buffer for), as CodeCompanion does."""

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any):
        self.reads.append(path)
        return schema.ReadTextFileResponse(content=self.buffers.get(path, ""))


async def test_a_missing_file_is_not_asked_of_the_editor(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "missing.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "fresh.txt", "content": "new\n"})]),
        Reply(text="done"),
    )
    editor = EmptyAnswers({})
    env = fake_env(tmp_path, fake_llm, AGENTLS_PERMISSION_MODE="acceptEdits")
    async with agentls_acp(tmp_path, env, editor, caps=FS) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("go"))

    missing = tool_results(fake_llm, 1)[0]
    assert "not found" in missing and "empty" not in missing
    assert editor.reads == []
    assert editor.writes == [(str(workspace / "fresh.txt"), "new\n")]


async def test_a_cancelled_plan_entry_is_not_shown_done(tmp_path, workspace, fake_llm):
    todos = [
        {"id": "1", "content": "write the parser", "status": "completed"},
        {"id": "2", "content": "port to rust", "status": "cancelled"},
        {"id": "3", "content": "write docs", "status": "pending"},
    ]
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("todo_write", {"todos": todos})]), Reply(text="ok")
    )
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("plan"))

    plan = await editor.wait_for("plan")
    shown = [(e.content, e.status) for e in plan.entries]
    assert ("write the parser", "completed") in shown and ("write docs", "pending") in shown
    assert all(not (c == "port to rust" and s == "completed") for c, s in shown)


async def test_mode_changes_are_mirrored_in_both_forms(tmp_path, workspace, fake_llm):
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await conn.set_session_mode(mode_id="plan", session_id=sid)
        option = await editor.wait_for("config_option_update")
        await conn.set_config_option(config_id="mode", session_id=sid, value="acceptEdits")
        mode = await editor.wait_for("current_mode_update")
    assert {o.id: o.current_value for o in option.config_options}["mode"] == "plan"
    assert mode.current_mode_id == "acceptEdits"


async def test_an_approved_plan_moves_the_editors_mode_too(tmp_path, workspace, fake_llm):
    plan = {"todos": [{"id": "1", "content": "Write a.txt", "status": "pending"}]}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("todo_write", plan)]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "a\n"})]),
        Reply(text="done"),
    )
    editor = Editor()
    editor.on_permission = lambda r: allow("allow_always")
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await conn.set_session_mode(mode_id="plan", session_id=sid)
        await conn.prompt(session_id=sid, prompt=text("add a.txt"))
    (asked,) = editor.permissions
    assert asked.options[0].name == "Yes, and accept edits"
    modes = [u.current_mode_id for u in calls(editor, "current_mode_update")]
    assert modes[-1] == "acceptEdits"
    options = calls(editor, "config_option_update")[-1].config_options
    assert {o.id: o.current_value for o in options}["mode"] == "acceptEdits"
    assert (workspace / "a.txt").read_text() == "a\n"


async def test_a_failed_mcp_server_and_a_retry_reach_the_editor(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(status=500, error_message="upstream hiccup"), Reply(text="answer"))
    broken = schema.McpServerStdio(
        name="broken", command=str(tmp_path / "no-such-server"), args=[], env=[]
    )
    editor = Editor()
    env = fake_env(tmp_path, fake_llm, AGENTLS_MAX_RETRIES="1")
    async with agentls_acp(tmp_path, env, editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[broken])
        response = await conn.prompt(session_id=session.session_id, prompt=text("hi"))
    assert response.stop_reason == "end_turn"
    said = editor.text()
    assert "broken" in said and "upstream hiccup" in said and said.endswith("answer")


async def test_an_image_turn_keeps_the_users_model_in_the_picker(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="a picture"))
    editor = Editor()
    env = fake_env(
        tmp_path, fake_llm, AGENTLS_MODEL="my-own-model", AGENTLS_VISION_MODEL="gpt-5.4-mini"
    )
    image = schema.ImageContentBlock(
        type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"
    )
    async with agentls_acp(tmp_path, env, editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[*text("what is it"), image])
        update = await editor.wait_for("config_option_update")
    model = next(o for o in update.config_options if o.id == "model")
    assert model.current_value == "gpt-5.4-mini"
    assert "my-own-model" in [o.value for o in model.options]


class Undecided(Editor):
    """Never answers a permission request (the user looks away, then presses stop)."""

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(tool_call)
        self.changed.set()
        await asyncio.Event().wait()


async def test_cancel_while_asking_closes_the_call(tmp_path, workspace, fake_llm):
    task = {"subagent_type": "executor", "description": "run", "prompt": "run it"}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("task", task, id="call_task")]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo hi"}, id="call_bash")]),
    )
    editor = Undecided()
    env = fake_env(tmp_path, fake_llm)
    async with agentls_acp(tmp_path, env, editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=text("go")))
        while not editor.permissions:
            editor.changed.clear()
            await asyncio.wait_for(editor.changed.wait(), 60)
        await conn.cancel(session_id=session.session_id)
        assert (await asyncio.wait_for(turn, 60)).stop_reason == "cancelled"
        before_the_answer = list(editor.updates)
    ids = [c.tool_call_id for c in calls(editor)]
    assert ids == ["call_task", "call_task/call_bash"]
    asked = editor.permissions[0]
    assert (asked.tool_call_id, asked.kind, asked.title) == (
        ids[1],
        "execute",
        "executor subagent: Run `echo hi`",
    )
    assert closing(before_the_answer) == dict.fromkeys(ids, "failed")

    loaded = Editor()
    async with agentls_acp(tmp_path, env, loaded) as (conn, _):
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
    assert [c.tool_call_id for c in calls(loaded)] == ids
    assert closing(loaded.updates) == dict.fromkeys(ids, "failed")


def test_a_line_edit_proposes_its_line():
    call = ToolCall(
        tool_call_id="c1",
        name="edit_file_hashed",
        title="Edit a.py (line abc123)",
        tool_kind="edit",
        input={
            "path": "a.py",
            "anchor_hash": "abc123",
            "expected_line": "x = 1",
            "new_line": "x = 2",
        },
        locations=[Location(path="/w/a.py")],
    )
    card = tool_call_start(call).model_dump(by_alias=True, exclude_none=True)
    assert card["content"] == [
        {"type": "diff", "path": "/w/a.py", "oldText": "x = 1", "newText": "x = 2"}
    ]

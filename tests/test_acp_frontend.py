"""`agentls acp` driven by the ACP SDK's own client over real stdio, against the loopback fake."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import schema

from server.sessions.service import SessionService
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env

FORM = schema.ClientCapabilities(
    elicitation=schema.ElicitationCapabilities(form=schema.ElicitationFormCapabilities())
)


def allow(option_id: str) -> schema.RequestPermissionResponse:
    return schema.RequestPermissionResponse(
        outcome=schema.AllowedOutcome(outcome="selected", option_id=option_id)
    )


class Editor:
    """The client side, as an editor would run it. Not an `acp.Client` subclass (methods it
    lacks must answer "method not found")."""

    def __init__(self) -> None:
        self.process: Any = None  # the agent process, once spawned
        self.updates: list[Any] = []
        self.permissions: list[schema.RequestPermissionRequest] = []
        self.elicitations: list[tuple[str, Any]] = []
        self.on_permission: Callable[[Any], schema.RequestPermissionResponse] = lambda r: allow(
            "allow_once"
        )
        self.on_elicitation: Callable[[Any], Any] = lambda mode: schema.DeclineElicitationResponse(
            action="decline"
        )
        self.changed = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        request = schema.RequestPermissionRequest(
            session_id=session_id, tool_call=tool_call, options=options
        )
        self.permissions.append(request)
        return self.on_permission(request)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any):
        self.elicitations.append((message, mode))
        return self.on_elicitation(mode)

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self) -> str:
        return "".join(
            u.content.text for u in self.updates if u.session_update == "agent_message_chunk"
        )

    async def wait_for(self, kind: str) -> Any:
        while True:
            for u in self.updates:
                if u.session_update == kind:
                    return u
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 60)


def fake_env(tmp_path: Path, fake_llm, **extra: str) -> dict[str, str]:
    defaults = {
        "AGENTLS_PROVIDER": "openai",
        "AGENTLS_MODEL": "gpt-5.5",
        "AGENTLS_BASE_URL": fake_llm.openai_base_url,
        "AGENTLS_MAX_RETRIES": "0",
        "OPENAI_API_KEY": "k",
    }
    return server_env(tmp_path, **{**defaults, **extra})


@asynccontextmanager
async def agentls_acp(tmp_path: Path, env: dict[str, str], editor: Editor, caps=None):
    log = (tmp_path / "acp-stderr.log").open("a")
    async with acp.spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "server.cli",
        "acp",
        env=env,
        transport_kwargs={"stderr": log},
        use_unstable_protocol=True,
    ) as (conn, proc):
        editor.process = proc
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=caps or schema.ClientCapabilities(),
            client_info=schema.Implementation(name="tests", version="0"),
        )
        yield conn, init
    log.close()


def text(value: str) -> list[schema.TextContentBlock]:
    return [schema.TextContentBlock(type="text", text=value)]


async def test_prompt_streams_chunks_and_a_tool_call(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(text="Let me look.", tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="It says hello."),
    )
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, init):
        assert init.protocol_version == 1
        caps = init.agent_capabilities
        assert caps.prompt_capabilities.image and caps.load_session
        assert init.agent_info.name == "agentls"
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=text("read notes"))

    assert response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (20, 10)
    assert editor.text() == "Let me look.It says hello."
    call, started, done = [
        u for u in editor.updates if u.session_update in ("tool_call", "tool_call_update")
    ]
    assert call.model_dump(by_alias=True, exclude_none=True) == {
        "sessionUpdate": "tool_call",
        "toolCallId": call.tool_call_id,
        "title": "Read notes.txt",
        "kind": "read",
        "status": "pending",
        "rawInput": {"path": "notes.txt"},
        "locations": [{"path": str(workspace / "notes.txt")}],
        "_meta": {"agentls": {"toolName": "read_file"}},
    }
    assert (started.status, done.status) == ("in_progress", "completed")
    assert done.content[0].content.text == "```\nhello\n```"
    assert editor.kinds()[0] == "available_commands_update"
    assert editor.kinds().count("usage_update") == 2


async def test_a_subagents_calls_name_their_task_call(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    task = {"subagent_type": "explorer", "description": "read", "prompt": "Read notes.txt"}
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("task", task, id="call_task")]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"}, id="call_read")]),
        Reply(text="It says hello."),
        Reply(text="Hello, says the subagent."),
    )
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=text("notes?"))
    assert response.stop_reason == "end_turn"
    calls = [
        (u.tool_call_id, u.field_meta["agentls"])
        for u in editor.updates
        if u.session_update == "tool_call"
    ]
    assert calls == [
        ("call_task", {"toolName": "task"}),
        ("call_task/call_read", {"toolName": "read_file", "parentToolCallId": "call_task"}),
    ]
    ends = [
        (u.tool_call_id, u.status, (u.field_meta or {}).get("agentls"))
        for u in editor.updates
        if u.session_update == "tool_call_update" and u.status == "completed"
    ]
    assert ends == [
        ("call_task/call_read", "completed", {"parentToolCallId": "call_task"}),
        ("call_task", "completed", None),
    ]


async def test_permission_allow_then_reject(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo yes > a.txt"})]),
        Reply(text="ran it"),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo no > b.txt"})]),
        Reply(text="did not run it"),
    )
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        first = await conn.prompt(session_id=session.session_id, prompt=text("run a"))
        editor.on_permission = lambda r: allow("reject_once")
        second = await conn.prompt(session_id=session.session_id, prompt=text("run b"))

    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert (workspace / "a.txt").read_text() == "yes\n"
    assert not (workspace / "b.txt").exists()
    asked = editor.permissions[0]
    assert asked.tool_call.title == "Run `echo yes > a.txt`"
    assert [o.kind for o in asked.options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    statuses = [u.status for u in editor.updates if u.session_update == "tool_call_update"]
    assert statuses == ["in_progress", "completed", "failed"]
    denied = [m["content"] for m in fake_llm.requests[3].body["messages"] if m["role"] == "tool"]
    assert "denied" in denied[-1]


ASK = {
    "questions": [
        {
            "question": "Which runner?",
            "header": "Runner",
            "options": [{"label": "pytest"}, {"label": "unittest"}],
        }
    ]
}


def tool_results(fake_llm, index: int) -> list[str]:
    return [m["content"] for m in fake_llm.requests[index].body["messages"] if m["role"] == "tool"]


async def test_question_answered_through_form_elicitation(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(tool_calls=[FakeToolCall("ask_user_question", ASK)]), Reply(text="ok"))
    editor = Editor()
    editor.on_elicitation = lambda mode: schema.AcceptElicitationResponse(
        action="accept", content={"q1": "unittest"}
    )
    env = fake_env(tmp_path, fake_llm)
    async with agentls_acp(tmp_path, env, editor, caps=FORM) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=text("set up"))

    assert response.stop_reason == "end_turn"
    message, mode = editor.elicitations[0]
    assert message == "Which runner?"
    call = next(u for u in editor.updates if u.session_update == "tool_call")
    assert (mode.session_id, mode.tool_call_id) == (session.session_id, call.tool_call_id)
    assert mode.requested_schema.model_dump(by_alias=True, exclude_none=True) == {
        "type": "object",
        "properties": {
            "q1": {
                "type": "string",
                "title": "Runner",
                "description": "Which runner?",
                "oneOf": [
                    {"const": "pytest", "title": "pytest"},
                    {"const": "unittest", "title": "unittest"},
                ],
            }
        },
        "required": ["q1"],
    }
    assert "Which runner? → unittest" in tool_results(fake_llm, 1)[0]
    assert editor.permissions == []


async def test_cancel_mid_turn_answers_cancelled(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["slow"] * 100), chunk_delay=0.05), Reply(text="fresh"))
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=text("talk")))
        await editor.wait_for("agent_message_chunk")
        await conn.cancel(session_id=session.session_id)
        cancelled = await asyncio.wait_for(turn, 60)
        again = await conn.prompt(session_id=session.session_id, prompt=text("again"))

    assert cancelled.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn" and editor.text().endswith("fresh")


@pytest.mark.skipif(not hasattr(SessionService, "load"), reason="SessionService.load not built yet")
async def test_load_replays_history_and_list_finds_it(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="first answer"), Reply(text="second answer"))
    env = fake_env(tmp_path, fake_llm)
    async with agentls_acp(tmp_path, env, Editor()) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("hello there"))

    editor = Editor()
    async with agentls_acp(tmp_path, env, editor) as (conn, _):
        listed = await conn.list_sessions(cwd=str(workspace))
        loaded = await conn.load_session(
            cwd=str(workspace), session_id=session.session_id, mcp_servers=[]
        )
        replayed = list(editor.updates)
        await conn.prompt(session_id=session.session_id, prompt=text("more"))

    assert [(s.session_id, s.title) for s in listed.sessions] == [
        (session.session_id, "hello there")
    ]
    assert loaded.modes.current_mode_id == "default"
    chunks = [(u.session_update, u.content.text) for u in replayed if hasattr(u, "content")]
    assert chunks[0] == ("user_message_chunk", "hello there")
    assert "".join(t for k, t in chunks if k == "agent_message_chunk") == "first answer"
    history = fake_llm.requests[1].body["messages"]
    assert [m["role"] for m in history if m["role"] != "system"][:3] == [
        "user",
        "assistant",
        "user",
    ]


async def test_model_and_mode_through_config_options(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        options = {o.id: o for o in session.config_options}
        await conn.prompt(session_id=session.session_id, prompt=text("hi"))
        changed = await conn.set_config_option(
            config_id="model", session_id=session.session_id, value="gpt-5.4-mini"
        )
        await conn.set_config_option(config_id="mode", session_id=session.session_id, value="plan")
        await conn.prompt(session_id=session.session_id, prompt=text("hi again"))
        with pytest.raises(acp.RequestError):
            await conn.set_config_option(
                config_id="mode", session_id=session.session_id, value="yolo"
            )

    assert (options["model"].category, options["model"].current_value) == ("model", "gpt-5.5")
    assert "gpt-5.4-mini" in [o.value for o in options["model"].options]
    assert options["mode"].category == "mode"
    assert [o.value for o in options["mode"].options] == [
        "default",
        "plan",
        "acceptEdits",
        "bypassPermissions",
    ]
    current = {o.id: o.current_value for o in changed.config_options}
    assert current == {"model": "gpt-5.4-mini", "mode": "default"}
    assert [r.body["model"] for r in fake_llm.requests] == ["gpt-5.5", "gpt-5.4-mini"]


async def test_an_engine_that_cannot_start_fails_session_new(tmp_path, workspace, fake_llm):
    env = fake_env(tmp_path, fake_llm, AGENTLS_ENGINE="acp")
    async with agentls_acp(tmp_path, env, Editor()) as (conn, _):
        with pytest.raises(acp.RequestError) as failure:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert "--engine-command" in str(failure.value)


async def test_the_command_list_has_model_and_the_users_skills(tmp_path, workspace, fake_llm):
    skill = tmp_path / ".agentls" / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: greet\ndescription: Say hello to someone.\n---\nSay hello to $1.\n")
    hidden = tmp_path / ".agentls" / "skills" / "quiet" / "SKILL.md"
    hidden.parent.mkdir(parents=True)
    hidden.write_text(
        "---\nname: quiet\ndescription: Model only.\nuser-invocable: false\n---\nShh.\n"
    )
    editor = Editor()
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
        update = await editor.wait_for("available_commands_update")
    commands = {c.name: c for c in update.available_commands}
    assert "greet" in commands and "quiet" not in commands
    assert commands["greet"].description == "Say hello to someone."
    assert commands["model"].input.root.hint

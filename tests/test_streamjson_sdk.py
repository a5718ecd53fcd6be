"""The real claude-agent-sdk drives `agentls` through `cli_path`, against the loopback fake."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env
from tests.conftest import write_project_config

AGENTLS = shutil.which("agentls", path=str(Path(sys.executable).parent))


def options(tmp_path, workspace, fake_llm, **extra) -> ClaudeAgentOptions:
    write_project_config(
        workspace,
        {
            "llm": {
                "provider": "openai",
                "model": "gpt-5.5",
                "baseUrl": fake_llm.openai_base_url,
                "maxRetries": 0,
            }
        },
    )
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    return ClaudeAgentOptions(cli_path=AGENTLS, cwd=str(workspace), env=env, **extra)


async def collect(prompt, opts):
    return [m async for m in query(prompt=prompt, options=opts)]


def text_of(messages):
    return "".join(
        b.text
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    )


async def test_query_with_a_string_prompt(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="It says hello."),
    )
    messages = await collect("What is in notes.txt?", options(tmp_path, workspace, fake_llm))
    init, *middle, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["cwd"] == str(workspace) and "Read" in init.data["tools"]
    tool_use = [
        b
        for m in middle
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock)
    ]
    assert [(t.name, t.input) for t in tool_use] == [
        ("Read", {"file_path": str(workspace / "notes.txt")})
    ]
    results = [
        b
        for m in middle
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    assert "1: hello" in results[0].content and not results[0].is_error
    assert text_of(middle) == "It says hello."
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.num_turns, result.result) == (
        "success",
        False,
        2,
        "It says hello.",
    )
    assert result.usage["input_tokens"] == 20 and result.session_id == init.data["session_id"]


async def test_partial_messages_stream_events(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="one two three"))
    opts = options(tmp_path, workspace, fake_llm, include_partial_messages=True)
    messages = await collect("count", opts)
    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert (
        "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
        == "one two three"
    )
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "one two three"


async def test_client_multi_turn_with_set_model_and_mode(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(text="first"),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(text="second"),
    )
    opts = options(tmp_path, workspace, fake_llm)
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("hello")
        first = [m async for m in client.receive_response()]
        await client.set_model("gpt-5.4-mini")
        await client.set_permission_mode("acceptEdits")
        await client.query("write a.txt")
        second = [m async for m in client.receive_response()]
    assert first[-1].result == "first" and second[-1].result == "second"
    assert [r.body["model"] for r in fake_llm.requests] == [
        "gpt-5.5",
        "gpt-5.4-mini",
        "gpt-5.4-mini",
    ]
    assert (workspace / "a.txt").read_text() == "x"
    inits = [m for m in first + second if isinstance(m, SystemMessage) and m.subtype == "init"]
    assert [i.data["permissionMode"] for i in inits] == ["default", "acceptEdits"]


async def test_can_use_tool_allow_and_deny(tmp_path, workspace, fake_llm):
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    fake_llm.script(
        Reply(
            tool_calls=[
                FakeToolCall(
                    "edit_file", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
                )
            ]
        ),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo hi > b.txt"})]),
        Reply(text="done"),
    )
    asked = []

    async def can_use_tool(name, tool_input, context):
        asked.append(name)
        if name == "Edit":
            return PermissionResultDeny(message="no thanks")
        return PermissionResultAllow()

    opts = options(tmp_path, workspace, fake_llm, can_use_tool=can_use_tool)
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("edit and run")
        messages = [m async for m in client.receive_response()]
    assert asked == ["Edit", "Bash"]
    assert target.read_text() == "x = 1\n"
    assert (workspace / "b.txt").read_text() == "hi\n"
    result = messages[-1]
    assert [d["tool_name"] for d in result.permission_denials] == ["Edit"]
    denied = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert "no thanks" in denied[0]


async def test_ask_user_question_through_can_use_tool(tmp_path, workspace, fake_llm):
    ask = {
        "questions": [
            {
                "question": "Which runner?",
                "header": "Runner",
                "options": [{"label": "pytest"}, {"label": "unittest"}],
            }
        ]
    }
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("ask_user_question", ask)]), Reply(text="pytest it is")
    )

    async def can_use_tool(name, tool_input, context):
        assert name == "AskUserQuestion"
        answers = {q["question"]: q["options"][0]["label"] for q in tool_input["questions"]}
        return PermissionResultAllow(updated_input={**tool_input, "answers": answers})

    opts = options(tmp_path, workspace, fake_llm, can_use_tool=can_use_tool)
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("set up tests")
        messages = [m async for m in client.receive_response()]
    assert messages[-1].result == "pytest it is"
    tool = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert "Which runner? → pytest" in tool[0]


async def test_interrupt_mid_stream_then_a_new_turn(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["slow"] * 50), chunk_delay=0.1), Reply(text="fresh"))
    opts = options(tmp_path, workspace, fake_llm, include_partial_messages=True)
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("talk")
        first = []
        async for message in client.receive_response():
            first.append(message)
            if isinstance(message, StreamEvent) and message.event["type"] == "content_block_delta":
                await client.interrupt()
        await client.query("again")
        second = [m async for m in client.receive_response()]
    result = first[-1]
    assert (result.subtype, result.is_error, result.terminal_reason) == (
        "error_during_execution",
        True,
        "aborted_streaming",
    )
    assert second[-1].result == "fresh" and second[-1].subtype == "success"


async def test_rewind_files_to_a_user_message(tmp_path, workspace, fake_llm):
    """Claude Code's file checkpointing as the SDK uses it: the replayed user message's uuid is
    the checkpoint; `rewind_files` puts the files back as they were before that message."""
    (workspace / "app.py").write_text("x = 1\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "app.py", "content": "x = 2\n"})]),
        Reply(text="first"),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "new.py", "content": "y\n"})]),
        Reply(text="second"),
    )
    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        enable_file_checkpointing=True,
        permission_mode="acceptEdits",
        extra_args={"replay-user-messages": None},
    )
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("change app.py")
        first = [m async for m in client.receive_response()]
        await client.query("add new.py")
        [m async for m in client.receive_response()]
        checkpoint = next(m.uuid for m in first if isinstance(m, UserMessage) and m.uuid)
        assert (workspace / "app.py").read_text() == "x = 2\n"
        await client.rewind_files(checkpoint)
    assert (workspace / "app.py").read_text() == "x = 1\n"
    assert not (workspace / "new.py").exists()

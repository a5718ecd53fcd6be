"""Claude Code permission rules and tool lists as the Python claude-agent-sdk passes them
(`allowed_tools`, `disallowed_tools`, `tools`), against the loopback fake model."""

from __future__ import annotations

import json

from claude_agent_sdk import ClaudeSDKClient, PermissionResultDeny, ResultMessage

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_streamjson_flags import notes_in
from tests.test_streamjson_sdk import collect, options


def tool_results(fake_llm, request: int) -> list[str]:
    messages = fake_llm.requests[request].body["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


async def test_a_denied_command_prefix_never_runs(tmp_path, workspace, fake_llm):
    victim = workspace / "victim.txt"
    victim.write_text("keep me\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "rm victim.txt"})]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo ok && rm -f victim.txt"})]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo hi > said.txt"})]),
        Reply(text="done"),
    )
    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        allowed_tools=["Bash"],
        disallowed_tools=["Bash(rm:*)"],
        permission_mode="bypassPermissions",
    )
    messages = await collect("clean up", opts)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    assert victim.read_text() == "keep me\n"
    assert (workspace / "said.txt").read_text() == "hi\n"
    for request in (1, 2):
        assert "Bash(rm:*)" in tool_results(fake_llm, request)[-1]
    denied = [d["tool_name"] for d in messages[-1].permission_denials]
    assert denied == ["Bash", "Bash"]


async def test_a_denied_read_path_is_refused_and_others_read(tmp_path, workspace, fake_llm):
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("s3cret\n")
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "secrets/key.txt"})]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="done"),
    )
    opts = options(tmp_path, workspace, fake_llm, disallowed_tools=["Read(./secrets/**)"])
    await collect("read", opts)
    refused = tool_results(fake_llm, 1)[-1]
    assert "s3cret" not in refused and "Read(./secrets/**)" in refused
    assert "1: hello" in tool_results(fake_llm, 2)[-1]


async def test_tools_restricts_the_built_in_tools(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="a"), Reply(text="b"))
    await collect("hi", options(tmp_path, workspace, fake_llm, tools=["Read", "Grep"]))
    offered = {t["function"]["name"] for t in fake_llm.requests[0].body["tools"]}
    assert offered == {"read_file", "grep"}
    await collect("hi", options(tmp_path, workspace, fake_llm, tools=[]))
    assert "tools" not in fake_llm.requests[1].body or not fake_llm.requests[1].body["tools"]


async def test_settings_permission_rules_apply_and_the_rest_is_named(tmp_path, workspace, fake_llm):
    victim = workspace / "victim.txt"
    victim.write_text("keep me\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "rm victim.txt"})]), Reply(text="done")
    )
    settings = '{"permissions": {"deny": ["Bash(rm:*)"]}, "env": {"X": "1"}}'
    opts = options(
        tmp_path, workspace, fake_llm, settings=settings, permission_mode="bypassPermissions"
    )
    messages = await collect("clean up", opts)
    assert victim.read_text() == "keep me\n"
    said = notes_in(
        [m.data["content"] for m in messages if getattr(m, "subtype", "") == "informational"]
    )
    assert said == ["settings not applied: env"]


async def test_setting_sources_read_the_rules_of_claude_settings(tmp_path, workspace, fake_llm):
    victim = workspace / "victim.txt"
    victim.write_text("keep me\n")
    (workspace / ".claude").mkdir()
    rules = {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Write"]}}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(rules))
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "rm victim.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "w.txt", "content": "x"})]),
        Reply(text="done"),
        Reply(text="hi"),
    )
    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        setting_sources=["project"],
        permission_mode="bypassPermissions",
    )
    messages = await collect("clean up", opts)
    assert victim.read_text() == "keep me\n"
    said = notes_in(
        [m.data["content"] for m in messages if getattr(m, "subtype", "") == "informational"]
    )
    assert said == [
        f"{workspace / '.claude' / 'settings.json'}: allow rules not applied (a project's settings only narrow)"
    ]
    empty = await collect("hi", options(tmp_path, workspace, fake_llm, setting_sources=[]))
    notes = notes_in(
        [m.data["content"] for m in empty if getattr(m, "subtype", "") == "informational"]
    )
    assert any("CLAUDE.md still load" in n for n in notes) and empty[-1].result == "hi"


async def test_a_path_allow_rule_answers_for_the_paths_it_names(tmp_path, workspace, fake_llm):
    (workspace / "src").mkdir()
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "src/a.py", "content": "a"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "b.py", "content": "b"})]),
        Reply(text="done"),
    )
    asked = []

    async def can_use_tool(name, tool_input, context):
        asked.append(tool_input["file_path"])
        return PermissionResultDeny(message="no")

    opts = options(
        tmp_path, workspace, fake_llm, allowed_tools=["Edit(src/**)"], can_use_tool=can_use_tool
    )
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("write")
        [m async for m in client.receive_response()]
    assert (workspace / "src" / "a.py").read_text() == "a"
    assert asked == [str(workspace / "b.py")] and not (workspace / "b.py").exists()

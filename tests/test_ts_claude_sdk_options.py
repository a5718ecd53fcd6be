"""Options of the TypeScript Claude Agent SDK that reach agentls only inside the `initialize`
control request (system prompts, MCP servers, disallowed tools, ...), through the real SDK."""

from __future__ import annotations

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.mcp_servers import demo_entry
from tests.node_clients import require_clients
from tests.test_streamjson_flags import notes_in
from tests.test_ts_claude_sdk import messages, run_query


@pytest.fixture(autouse=True)
def _clients():
    require_clients()


def system_prompt(fake_llm, request=0) -> str:
    return fake_llm.requests[request].body["messages"][0]["content"]


def warnings(events) -> list[str]:
    contents = [m["content"] for m in messages(events, "system") if m["subtype"] == "informational"]
    return notes_in(contents)


def test_a_custom_system_prompt_and_an_appended_one(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    run_query(tmp_path, workspace, fake_llm, prompt="hi", options={"systemPrompt": "Be terse."})
    run_query(
        tmp_path,
        workspace,
        fake_llm,
        prompt="hi",
        options={
            "systemPrompt": {"type": "preset", "preset": "claude_code", "append": "In French."}
        },
    )
    run_query(
        tmp_path, workspace, fake_llm, prompt="hi", options={"systemPrompt": ["One.", "Two."]}
    )
    assert system_prompt(fake_llm, 0) == "Be terse."
    assert system_prompt(fake_llm, 1).startswith("You are agentls")
    assert system_prompt(fake_llm, 1).endswith("\nIn French.")
    assert system_prompt(fake_llm, 2) == "One.\n\nTwo."


def test_disallowed_rules_sent_in_initialize_deny(tmp_path, workspace, fake_llm):
    victim = workspace / "victim.txt"
    victim.write_text("keep\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "rm victim.txt"})]), Reply(text="ok")
    )
    options = {
        "disallowedTools": ["Bash(rm:*)"],
        "allowedTools": ["Bash"],
        "permissionMode": "bypassPermissions",
        "allowDangerouslySkipPermissions": True,
    }
    events = run_query(tmp_path, workspace, fake_llm, prompt="clean", options=options)
    assert victim.read_text() == "keep\n"
    [result] = messages(events, "result")
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]


def test_what_is_not_done_is_said(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="a"))
    options = {
        "agents": {"reviewer": {"description": "Reviews", "prompt": "Review.", "model": "opus"}},
        "fallbackModel": "gpt-5",
        "promptSuggestions": True,
    }
    events = run_query(tmp_path, workspace, fake_llm, prompt="hi", options=options)
    said = warnings(events)
    assert "agent reviewer: model 'opus' runs the session's model" in said
    assert any("--fallback-model" in w for w in said)
    assert any("prompt suggestions" in w for w in said)
    assert messages(events, "result")[0]["result"] == "a"


def test_mcp_servers_sent_in_initialize_start(tmp_path, workspace, fake_llm):
    """The SDK's default delivery of `mcpServers`: inside `initialize`, with
    `--await-initialize`; it ends the session unless `mcp_servers_applied` answers."""
    state = tmp_path / "state"
    state.mkdir()
    fake_llm.script(Reply(tool_calls=[FakeToolCall("mcp__demo__pixel", {})]), Reply(text="seen"))
    options = {"mcpServers": {"demo": demo_entry(state)}, "allowedTools": ["mcp__demo"]}
    events = run_query(tmp_path, workspace, fake_llm, prompt="look", options=options)
    [result] = messages(events, "result")
    assert result["result"] == "seen"
    [init] = [m for m in messages(events, "system") if m["subtype"] == "init"]
    assert [s["name"] for s in init["mcp_servers"]] == ["demo"]
    offered = {t["function"]["name"] for t in fake_llm.requests[0].body["tools"]}
    assert "mcp__demo__pixel" in offered


def test_an_in_process_mcp_server(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("mcp__calc__add", {"a": 2, "b": 40})]),
        Reply(text="forty-two"),
    )
    options = {"allowedTools": ["mcp__calc__add"]}
    events = run_query(
        tmp_path, workspace, fake_llm, prompt="add", options=options, sdkServer="calc"
    )
    assert [e["args"] for e in events if e["event"] == "tool"] == [{"a": 2, "b": 40}]
    [result] = messages(events, "result")
    assert result["result"] == "forty-two"
    results = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert "42" in results[-1]


def test_hooks_are_called_back(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "touch made.txt"})]), Reply(text="ok")
    )
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not today",
        }
    }
    hooks = {"PreToolUse": {"matcher": "Bash", "output": deny}}
    options = {"permissionMode": "bypassPermissions", "allowDangerouslySkipPermissions": True}
    events = run_query(tmp_path, workspace, fake_llm, prompt="go", options=options, hooks=hooks)
    [called] = [e for e in events if e["event"] == "hook"]
    assert called["input"]["hook_event_name"] == "PreToolUse"
    assert called["input"]["tool_name"] == "Bash"
    assert called["input"]["tool_input"] == {"command": "touch made.txt"}
    assert called["toolUseID"]
    assert not (workspace / "made.txt").exists()
    results = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert "not today" in results[-1]

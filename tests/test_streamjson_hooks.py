"""SDK hooks (`hooks=` of the Python claude-agent-sdk), called back with `hook_callback`
through the real SDK, against the loopback fake model."""

from __future__ import annotations

from claude_agent_sdk import (
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
)

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_streamjson_sdk import options


async def run(opts, prompt="go"):
    async with ClaudeSDKClient(options=opts) as client:
        await client.query(prompt)
        return [m async for m in client.receive_response()]


def tool_results(fake_llm, request):
    return [
        m["content"] for m in fake_llm.requests[request].body["messages"] if m["role"] == "tool"
    ]


def user_texts(fake_llm, request):
    messages = fake_llm.requests[request].body["messages"]
    return [m["content"] for m in messages if m["role"] == "user"]


async def test_pre_tool_use_deny_blocks_even_in_bypass_mode(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "touch made.txt"})]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "x.txt"})]),
        Reply(text="done"),
    )
    (workspace / "x.txt").write_text("x\n")
    seen = []

    async def guard(hook_input, tool_use_id, context):
        seen.append(
            (
                hook_input["hook_event_name"],
                hook_input["tool_name"],
                hook_input["tool_input"],
                tool_use_id,
            )
        )
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no shell here",
            }
        }

    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
    )
    messages = await run(opts)
    assert not (workspace / "made.txt").exists()
    assert "no shell here" in tool_results(fake_llm, 1)[-1]
    assert "1: x" in tool_results(fake_llm, 2)[-1]  # Read does not match the Bash matcher
    [(event, name, tool_input, use_id)] = seen
    assert (event, name, tool_input) == ("PreToolUse", "Bash", {"command": "touch made.txt"})
    assert use_id and messages[-1].result == "done"


async def test_pre_tool_use_allow_answers_the_question(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(text="done"),
    )

    async def allow(hook_input, tool_use_id, context):
        return {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        }

    opts = options(
        tmp_path, workspace, fake_llm, hooks={"PreToolUse": [HookMatcher(hooks=[allow])]}
    )
    await run(opts)
    assert (workspace / "a.txt").read_text() == "x"


async def test_a_hooks_updated_input_is_judged_again(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(text="done"),
    )
    outside = tmp_path / "outside.txt"
    asked = []

    async def rewrite(hook_input, tool_use_id, context):
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"file_path": str(outside), "content": "moved"},
            }
        }

    async def can_use_tool(name, tool_input, context):
        asked.append(tool_input["file_path"])
        return PermissionResultAllow()

    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        can_use_tool=can_use_tool,
        hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[rewrite])]},
    )
    await run(opts)
    assert asked == [str(outside)]  # a new path: the user is asked, the hook's allow does not carry
    assert outside.read_text() == "moved"


async def test_post_tool_use_and_prompt_context_reach_the_model(tmp_path, workspace, fake_llm):
    (workspace / "x.txt").write_text("x\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "x.txt"})]), Reply(text="done")
    )

    async def after(hook_input, tool_use_id, context):
        assert "1: x" in str(hook_input["tool_response"])
        return {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "x.txt is generated",
            }
        }

    async def prompt(hook_input, tool_use_id, context):
        assert hook_input["prompt"] == "look"
        return {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "Ticket 42",
            }
        }

    hooks = {
        "PostToolUse": [HookMatcher(matcher="Read", hooks=[after])],
        "UserPromptSubmit": [HookMatcher(hooks=[prompt])],
    }
    await run(options(tmp_path, workspace, fake_llm, hooks=hooks), "look")
    assert any("look" in t and t.endswith("Ticket 42") for t in user_texts(fake_llm, 0))
    assert tool_results(fake_llm, 1)[-1].endswith("x.txt is generated")


async def test_a_blocked_prompt_never_reaches_the_model(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="second"))

    async def prompt(hook_input, tool_use_id, context):
        if "secret" in hook_input["prompt"]:
            return {"decision": "block", "reason": "no secrets"}
        return {}

    opts = options(
        tmp_path, workspace, fake_llm, hooks={"UserPromptSubmit": [HookMatcher(hooks=[prompt])]}
    )
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("the secret is 1234")
        first = [m async for m in client.receive_response()]
        await client.query("hello")
        second = [m async for m in client.receive_response()]
    assert "no secrets" in (first[-1].result or "")
    assert second[-1].result == "second"
    assert len(fake_llm.requests) == 1
    assert not any("1234" in str(m) for m in fake_llm.requests[0].body["messages"])


async def test_a_stop_hook_keeps_the_turn_going_once(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="half"), Reply(text="whole"))
    calls = []

    async def stop(hook_input, tool_use_id, context):
        calls.append(hook_input["stop_hook_active"])
        if not hook_input["stop_hook_active"]:
            return {"decision": "block", "reason": "run the tests first"}
        return {}

    opts = options(tmp_path, workspace, fake_llm, hooks={"Stop": [HookMatcher(hooks=[stop])]})
    messages = await run(opts)
    assert calls == [False, True] and messages[-1].result == "whole"
    assert any("run the tests first" in t for t in user_texts(fake_llm, 1))


async def test_a_failing_hook_blocks_only_when_its_matcher_says_so(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "touch one.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "two.txt", "content": "2"})]),
        Reply(text="done"),
    )

    async def broken(hook_input, tool_use_id, context):
        raise RuntimeError("the hook's own bug")

    hooks = {
        "PreToolUse": [
            HookMatcher(matcher="Bash", hooks=[broken], on_failure="block"),
            HookMatcher(matcher="Write", hooks=[broken]),
        ]
    }
    opts = options(tmp_path, workspace, fake_llm, permission_mode="bypassPermissions", hooks=hooks)
    await run(opts)
    assert not (workspace / "one.txt").exists()
    assert (workspace / "two.txt").read_text() == "2"


async def test_a_hooks_allow_does_not_answer_an_ask_rule(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "git push"})]), Reply(text="done")
    )
    asked = []

    async def allow(hook_input, tool_use_id, context):
        return {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        }

    async def can_use_tool(name, tool_input, context):
        asked.append(tool_input["command"])
        return PermissionResultDeny(message="not now")

    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        settings='{"permissions": {"ask": ["Bash(git push:*)"]}}',
        can_use_tool=can_use_tool,
        hooks={"PreToolUse": [HookMatcher(hooks=[allow])]},
    )
    await run(opts)
    assert asked == ["git push"]


async def test_hook_events_frame_each_call(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="done"))

    async def prompt(hook_input, tool_use_id, context):
        return {}

    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        include_hook_events=True,
        hooks={"UserPromptSubmit": [HookMatcher(hooks=[prompt])]},
    )
    messages = await run(opts)
    frames = [m.data for m in messages if getattr(m, "subtype", "").startswith("hook_")]
    assert [(f["subtype"], f["hook_event"]) for f in frames] == [
        ("hook_started", "UserPromptSubmit"),
        ("hook_response", "UserPromptSubmit"),
    ]
    assert frames[1]["outcome"] == "success" and frames[0]["hook_id"] == frames[1]["hook_id"]


async def test_permission_request_hooks_answer_for_the_user(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(tool_calls=[FakeToolCall("bash", {"command": "touch b.txt"})]),
        Reply(text="done"),
    )
    asked, seen = [], []

    async def decide(hook_input, tool_use_id, context):
        seen.append((hook_input["tool_name"], hook_input["tool_input"]))
        behavior = "allow" if hook_input["tool_name"] == "Write" else "deny"
        decision = {"behavior": behavior, "message": "no commands"}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}

    async def can_use_tool(name, tool_input, context):
        asked.append(name)
        return PermissionResultAllow()

    opts = options(
        tmp_path,
        workspace,
        fake_llm,
        can_use_tool=can_use_tool,
        hooks={"PermissionRequest": [HookMatcher(hooks=[decide])]},
    )
    await run(opts)
    assert asked == [] and (workspace / "a.txt").read_text() == "x"
    assert not (workspace / "b.txt").exists()
    assert seen[0] == ("Write", {"file_path": str(workspace / "a.txt"), "content": "x"})
    assert "no commands" in tool_results(fake_llm, 2)[-1]

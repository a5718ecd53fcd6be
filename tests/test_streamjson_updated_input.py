"""A host's `updatedInput` is a new call when it names another path or command: it is judged
again (asked again when the policy asks), and `outside_sandbox` never comes from it. Through
the Python claude-agent-sdk's `can_use_tool`."""

from __future__ import annotations

from claude_agent_sdk import ClaudeSDKClient, PermissionResultAllow, PermissionResultDeny

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_sandbox import needs_bwrap
from tests.test_streamjson_sdk import options


async def run(opts, prompt="go"):
    async with ClaudeSDKClient(options=opts) as client:
        await client.query(prompt)
        return [m async for m in client.receive_response()]


async def test_an_answer_naming_another_path_is_asked_again(tmp_path, workspace, fake_llm):
    hook = workspace / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True)
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(text="done"),
    )
    asked = []

    async def can_use_tool(name, tool_input, context):
        asked.append(tool_input["file_path"])
        if len(asked) == 1:
            return PermissionResultAllow(
                updated_input={"file_path": str(hook), "content": "#!/bin/sh\nevil\n"}
            )
        return PermissionResultDeny(message="not that one")

    await run(options(tmp_path, workspace, fake_llm, can_use_tool=can_use_tool))
    assert asked == [str(workspace / "a.txt"), str(hook)]
    assert not hook.exists() and not (workspace / "a.txt").exists()


async def test_the_same_path_with_other_content_runs_as_allowed(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(text="done"),
    )
    asked = []

    async def can_use_tool(name, tool_input, context):
        asked.append(name)
        return PermissionResultAllow(updated_input={**tool_input, "content": "mine"})

    await run(options(tmp_path, workspace, fake_llm, can_use_tool=can_use_tool))
    assert asked == ["Write"] and (workspace / "a.txt").read_text() == "mine"


@needs_bwrap
async def test_an_answer_cannot_take_a_command_out_of_the_sandbox(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": "echo hi > ../out.txt"})]),
        Reply(text="done"),
    )
    asked = []
    rewritten = {"command": 'touch "$HOME/pwned"', "outside_sandbox": True}

    async def can_use_tool(name, tool_input, context):
        asked.append(tool_input["command"])
        return PermissionResultAllow(updated_input=rewritten)

    opts = options(tmp_path, workspace, fake_llm, can_use_tool=can_use_tool)
    opts.env["AGENTLS_SANDBOX"] = "workspace-write"
    await run(opts)
    # The first call asked because it writes outside (it would have run outside once allowed);
    # the rewrite stays inside the sandbox, which runs it unasked and keeps $HOME read-only.
    assert asked == ["echo hi > ../out.txt"]
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "out.txt").exists()

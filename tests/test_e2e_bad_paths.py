"""A bad path from the model (a NUL byte) fails that one tool call with a clear error; the turn
goes on. Through `agentls serve` over real stdio, against the loopback fake model."""

from __future__ import annotations

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import prompt, start


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "a\x00b.txt"}),
        ("write_file", {"path": "a\x00b.txt", "content": "x"}),
        ("edit_file", {"path": "a\x00b.txt", "old_string": "x", "new_string": "y"}),
        ("grep", {"pattern": "x", "path": "a\x00b"}),
        ("glob", {"pattern": "*.txt", "path": "a\x00b"}),
        (
            "edit_file_hashed",
            {"path": "a\x00b", "anchor_hash": "abcdef", "expected_line": "x", "new_line": "y"},
        ),
    ],
)
async def test_a_nul_byte_in_a_path_fails_that_call_only(
    tmp_path, workspace, fake_llm, tool, arguments
):
    (workspace / "ok.txt").write_text("fine\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall(tool, arguments, id="bad")]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "ok.txt"}, id="good")]),
        Reply(text="carried on"),
    )
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        new = {"cwd": str(workspace), "mode": "acceptEdits"}
        sid = (await client.call("session/new", new))["sessionId"]
        result = await client.call("session/prompt", prompt(sid, "go"))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    ends = {
        u["update"]["toolCallId"]: u["update"]
        for u in client.updates
        if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] != "in_progress"
    }
    assert ends["bad"]["status"] == "failed"
    assert "NUL" in ends["bad"]["error"]
    assert ends["good"]["status"] == "completed"

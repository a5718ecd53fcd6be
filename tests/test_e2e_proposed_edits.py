"""A proposed edit, as an editor reviews it in its own diff view: the permission request carries
the whole file before and after, and an answer with the user's own version writes that, through
`agentls serve` over real stdio against the loopback fake model."""

from __future__ import annotations

import json

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import prompt, start

APP = "def total(items):\n    return 0\n"


def tool_results(fake_llm) -> list[str]:
    messages = fake_llm.requests[-1].body["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


async def run(tmp_path, workspace, fake_llm, call, answer):
    (workspace / "app.py").write_text(APP)
    fake_llm.script(Reply(tool_calls=[call]), Reply(text="Done."))
    client = await start(tmp_path, workspace, fake_llm)
    client.on_permission = answer
    try:
        await client.initialize()
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        result = await client.call("session/prompt", prompt(sid, "fix total"))
    finally:
        await client.close()
    assert result["terminal"] == "completed"
    return client.permission_requests


def allow(updated=None):
    def answer(params):
        reply = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        return reply | ({"updatedInput": updated} if updated is not None else {})

    return answer


EDIT = FakeToolCall(
    "edit_file",
    {"path": "app.py", "old_string": "return 0", "new_string": "return sum(items)"},
    id="e1",
)


async def test_an_edits_request_carries_the_whole_file_before_and_after(
    tmp_path, workspace, fake_llm
):
    asked = await run(tmp_path, workspace, fake_llm, EDIT, allow())
    assert asked[0]["toolCall"]["proposal"] == {
        "path": str(workspace / "app.py"),
        "oldText": APP,
        "newText": "def total(items):\n    return sum(items)\n",
    }
    assert (workspace / "app.py").read_text() == "def total(items):\n    return sum(items)\n"


async def test_the_users_version_of_a_proposed_edit_is_what_gets_written(
    tmp_path, workspace, fake_llm
):
    mine = "def total(items):\n    return sum(i.price for i in items)\n"
    await run(tmp_path, workspace, fake_llm, EDIT, allow({"content": mine}))
    assert (workspace / "app.py").read_text() == mine
    result = json.loads(tool_results(fake_llm)[0])
    assert result["note"].startswith("The user changed your proposed edit")


async def test_a_users_version_for_another_file_is_refused(tmp_path, workspace, fake_llm):
    other = {"content": "x", "path": "elsewhere.py"}
    await run(tmp_path, workspace, fake_llm, EDIT, allow(other))
    assert (workspace / "app.py").read_text() == APP
    assert not (workspace / "elsewhere.py").exists()
    assert "edited input is invalid" in tool_results(fake_llm)[0]


async def test_a_writes_request_proposes_the_new_file(tmp_path, workspace, fake_llm):
    call = FakeToolCall("write_file", {"path": "new.py", "content": "x = 1\n"}, id="w1")
    asked = await run(tmp_path, workspace, fake_llm, call, allow({"content": "x = 2\n"}))
    assert asked[0]["toolCall"]["proposal"] == {
        "path": str(workspace / "new.py"),
        "newText": "x = 1\n",
    }
    assert (workspace / "new.py").read_text() == "x = 2\n"

"""Checkpoints and `session/rewind` through `agentls serve` over real stdio, against the loopback
fake model: turns that edit files can be undone byte for byte, in the same process or after a
reload in a new one; a file changed outside agentls since stops the rewind; the conversation
can branch before a turn, the original session staying loadable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, prompt, start
from tests.test_acp_frontend import Editor, agentls_acp, fake_env, text

A = b"def a():\n    return 1\n"
B = b"line one\r\nline two\r\n"  # CRLF kept byte for byte
PNG = bytes(range(256)) * 4  # not text: only write_file can replace it


def edit(path: str, old: str, new: str, call: str) -> FakeToolCall:
    return FakeToolCall("edit_file", {"path": path, "old_string": old, "new_string": new}, id=call)


def write(path: str, content: str, call: str) -> FakeToolCall:
    return FakeToolCall("write_file", {"path": path, "content": content}, id=call)


def seed(workspace: Path) -> None:
    (workspace / "a.py").write_bytes(A)
    (workspace / "b.txt").write_bytes(B)
    (workspace / "logo.png").write_bytes(PNG)


def script_three_turns(fake_llm) -> None:
    """Turn 1 only talks; turn 2 edits a.py, creates c/new.md and replaces logo.png; turn 3
    edits b.txt and a.py again."""
    fake_llm.script(
        Reply(text="Hello."),
        Reply(tool_calls=[edit("a.py", "return 1", "return 2", "c1")]),
        Reply(tool_calls=[write("c/new.md", "# new\n", "c2")]),
        Reply(tool_calls=[write("logo.png", "not a picture", "c3")]),
        Reply(text="Changed three files."),
        Reply(tool_calls=[edit("b.txt", "line two", "line 2", "c4")]),
        Reply(tool_calls=[edit("a.py", "return 2", "return 3", "c5")]),
        Reply(text="Changed two more."),
    )


async def run_turns(client: AgentClient, workspace: Path) -> tuple[str, list[str]]:
    sid = (await client.call("session/new", {"cwd": str(workspace), "mode": "acceptEdits"}))[
        "sessionId"
    ]
    turns = []
    for words in ("hi", "change things", "change more"):
        result = await client.call("session/prompt", prompt(sid, words))
        assert result["terminal"] == "completed", result
        turns.append(result["turnId"])
    return sid, turns


async def refused(client: AgentClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        await client.call(method, params)
    except JsonRpcException as exc:
        return {"code": exc.code, "message": exc.message, "data": exc.data}
    raise AssertionError(f"{method} was not refused")


async def open_client(tmp_path, workspace, fake_llm) -> AgentClient:
    client = await start(tmp_path, workspace, fake_llm)
    await client.initialize()
    return client


async def test_rewinding_two_turns_restores_every_file_byte_for_byte(
    tmp_path, workspace, fake_llm
):
    seed(workspace)
    script_three_turns(fake_llm)
    client = await open_client(tmp_path, workspace, fake_llm)
    try:
        sid, turns = await run_turns(client, workspace)
        assert (workspace / "a.py").read_bytes() == b"def a():\n    return 3\n"
        checkpoints = {
            u["turnId"]: u["update"]["files"]
            for u in client.updates
            if u["update"]["kind"] == "checkpoint"
        }
        real = workspace.resolve()
        assert checkpoints == {
            turns[1]: [str(real / "a.py"), str(real / "c" / "new.md"), str(real / "logo.png")],
            turns[2]: [str(real / "b.txt"), str(real / "a.py")],
        }
        preview = await client.call(
            "session/rewind", {"sessionId": sid, "turnId": turns[1], "dryRun": True}
        )
        assert sorted(preview["restored"]) == sorted(
            [str(real / "a.py"), str(real / "logo.png"), str(real / "b.txt")]
        )
        assert preview["removed"] == [str(real / "c" / "new.md")]
        assert preview["conflicts"] == []
        assert (workspace / "a.py").read_bytes() != A, "a dry run changes nothing"

        done = await client.call("session/rewind", {"sessionId": sid, "turnId": turns[1]})
        assert sorted(done["restored"]) == sorted(preview["restored"])
        assert "sessionId" not in done
    finally:
        await client.close()
    assert (workspace / "a.py").read_bytes() == A
    assert (workspace / "b.txt").read_bytes() == B
    assert (workspace / "logo.png").read_bytes() == PNG
    assert not (workspace / "c" / "new.md").exists()


async def test_a_file_changed_outside_agentls_stops_the_rewind(tmp_path, workspace, fake_llm):
    seed(workspace)
    script_three_turns(fake_llm)
    client = await open_client(tmp_path, workspace, fake_llm)
    try:
        sid, turns = await run_turns(client, workspace)
        (workspace / "b.txt").write_bytes(b"the user's own edit\n")
        preview = await client.call(
            "session/rewind", {"sessionId": sid, "turnId": turns[1], "dryRun": True}
        )
        refusal = await refused(client, "session/rewind", {"sessionId": sid, "turnId": turns[1]})
    finally:
        await client.close()
    conflict = str(workspace.resolve() / "b.txt")
    assert preview["conflicts"] == [conflict]
    assert refusal["code"] == -31006
    assert refusal["data"] == {"conflicts": [conflict]}
    assert conflict in refusal["message"]
    assert (workspace / "a.py").read_bytes() == b"def a():\n    return 3\n", "nothing restored"
    assert (workspace / "c" / "new.md").exists()


async def test_rewind_after_a_reload_in_a_new_process(tmp_path, workspace, fake_llm):
    seed(workspace)
    script_three_turns(fake_llm)
    client = await open_client(tmp_path, workspace, fake_llm)
    try:
        sid, turns = await run_turns(client, workspace)
    finally:
        await client.close()
    again = await open_client(tmp_path, workspace, fake_llm)
    try:
        await again.call("session/load", {"sessionId": sid})
        replayed = [u for u in again.updates if u["update"]["kind"] == "checkpoint"]
        await again.call("session/rewind", {"sessionId": sid, "turnId": turns[2]})
    finally:
        await again.close()
    assert [u["turnId"] for u in replayed] == [turns[1], turns[1], turns[1], turns[2], turns[2]]
    assert (workspace / "b.txt").read_bytes() == B
    assert (workspace / "a.py").read_bytes() == b"def a():\n    return 2\n", "turn 2's edit stays"
    assert (workspace / "logo.png").read_bytes() == b"not a picture"


async def test_the_conversation_branches_before_the_rewound_turn(tmp_path, workspace, fake_llm):
    seed(workspace)
    script_three_turns(fake_llm)
    client = await open_client(tmp_path, workspace, fake_llm)
    try:
        sid, turns = await run_turns(client, workspace)
        done = await client.call(
            "session/rewind", {"sessionId": sid, "turnId": turns[1], "conversation": True}
        )
    finally:
        await client.close()
    branch = done["sessionId"]
    assert branch != sid
    assert (workspace / "a.py").read_bytes() == A

    fake_llm.script(Reply(text="Starting over."))
    again = await open_client(tmp_path, workspace, fake_llm)
    try:
        await again.call("session/load", {"sessionId": branch})
        shown = [
            (u["update"]["kind"], u["update"].get("text"))
            for u in again.updates
            if u["update"]["kind"] in ("user_message_chunk", "agent_message_chunk")
        ]
        asked = len(fake_llm.requests)
        result = await again.call("session/prompt", prompt(branch, "try another way"))
        original = await again.call("session/load", {"sessionId": sid})
        listed = await again.call("session/list", {"cwd": str(workspace)})
    finally:
        await again.close()
    assert shown == [("user_message_chunk", "hi"), ("agent_message_chunk", "Hello.")]
    assert result["terminal"] == "completed"
    sent = fake_llm.requests[asked].body["messages"]
    said = [m.get("content") for m in sent if m["role"] in ("user", "assistant")]
    flat = repr(said)
    assert "hi" in flat and "Hello." in flat and "try another way" in flat
    assert "change things" not in flat and "Changed three files." not in flat
    assert original["sessionId"] == sid
    assert {s["sessionId"] for s in listed["data"]} >= {sid, branch}


async def test_rewind_is_refused_for_a_turn_of_another_session(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="Hello."))
    client = await open_client(tmp_path, workspace, fake_llm)
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        await client.call("session/prompt", prompt(sid, "hi"))
        other = await refused(
            client, "session/rewind", {"sessionId": sid, "turnId": "turn_000000000000"}
        )
    finally:
        await client.close()
    assert other["code"] == -31006


async def test_acp_clients_rewind_through_the_extension_method(tmp_path, workspace, fake_llm):
    (workspace / "a.py").write_bytes(A)
    fake_llm.script(
        Reply(tool_calls=[edit("a.py", "return 1", "return 2", "c1")]),
        Reply(text="Done."),
    )
    editor = Editor()
    env = fake_env(tmp_path, fake_llm)
    async with agentls_acp(tmp_path, env, editor) as (conn, init):
        assert init.agent_capabilities.field_meta == {
            "agentls": {"rewind": "_agentls/session/rewind", "reportTurns": True}
        }
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=text("bump it"))
        turn = response.field_meta["agentls"]["turnId"]
        done = await conn.ext_method(
            "agentls/session/rewind", {"sessionId": session.session_id, "turnId": turn}
        )
    assert done["restored"] == [str(workspace.resolve() / "a.py")]
    assert (workspace / "a.py").read_bytes() == A

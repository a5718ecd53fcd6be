"""A retried model call takes back only what its failed attempt streamed: the user's prompt,
the tool calls of earlier steps and their results stay in the stored session, so a resumed
session and a search still find them."""

from __future__ import annotations

import asyncio
import json

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_e2e_interrupted import configure, prompt, start

WIRES = ["anthropic", "openai"]


def retries(workspace) -> None:
    path = workspace / ".agentls" / "config.json"
    config = json.loads(path.read_text())
    config["llm"]["maxRetries"] = 2
    path.write_text(json.dumps(config))


def stored(updates: list[dict]) -> list[tuple]:
    """The replayed conversation, minus progress: (kind, text or tool name)."""
    out = []
    for u in (u["update"] for u in updates):
        match u["kind"]:
            case "user_message_chunk" | "agent_message_chunk":
                out.append((u["kind"], u["text"]))
            case "tool_call":
                out.append((u["kind"], u["name"]))
    return out


async def run_and_reload(tmp_path, workspace, fake_llm, wire, *replies: Reply):
    configure(workspace, fake_llm, wire, permissions={"mode": "bypassPermissions"})
    retries(workspace)
    fake_llm.script(*replies)
    client = await start(tmp_path, wire)
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        result = await client.call("session/prompt", prompt(sid, "where is zebrafinch defined?"))
    finally:
        await client.close()
    kinds = [u["update"]["kind"] for u in client.updates]
    assert result["terminal"] == "completed" and "stream_retry" in kinds, kinds
    return await reload(tmp_path, wire, sid, "zebrafinch")


async def reload(tmp_path, wire, sid: str, query: str) -> tuple[list[tuple], list[dict]]:
    """The session as a new server process replays it, and the search hits for `query`."""
    again = await start(tmp_path, wire)
    try:
        await again.call("session/load", {"sessionId": sid})
        hits = (await again.call("session/search", {"query": query}))["hits"]
    finally:
        await again.close()
    return stored(again.updates), hits


@pytest.mark.parametrize("wire", WIRES)
async def test_a_retry_of_the_first_call_keeps_the_prompt(tmp_path, workspace, fake_llm, wire):
    replay, hits = await run_and_reload(
        tmp_path, workspace, fake_llm, wire,
        Reply(text="I will look it up half", cut_after=2),
        Reply(text="In birds.py."),
    )  # fmt: skip
    assert replay == [
        ("user_message_chunk", "where is zebrafinch defined?"),
        ("agent_message_chunk", "In birds.py."),
    ]
    assert [h["role"] for h in hits] == ["user"]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_retry_after_a_tool_step_keeps_the_earlier_step(
    tmp_path, workspace, fake_llm, wire
):
    (workspace / "birds.py").write_text("def zebrafinch():\n    pass\n")
    replay, _ = await run_and_reload(
        tmp_path, workspace, fake_llm, wire,
        Reply(text="Reading.", tool_calls=[FakeToolCall("read_file", {"path": "birds.py"})]),
        Reply(text="It is defined in", cut_after=2),
        Reply(text="In birds.py, line 1."),
    )  # fmt: skip
    assert replay == [
        ("user_message_chunk", "where is zebrafinch defined?"),
        ("agent_message_chunk", "Reading."),
        ("tool_call", "read_file"),
        ("agent_message_chunk", "In birds.py, line 1."),
    ]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_retry_after_a_steer_keeps_the_steer(tmp_path, workspace, fake_llm, wire):
    (workspace / "birds.py").write_text("def zebrafinch():\n    pass\n")
    configure(workspace, fake_llm, wire, permissions={"mode": "bypassPermissions"})
    retries(workspace)
    fake_llm.script(
        Reply(
            text="Reading it slowly.",
            tool_calls=[FakeToolCall("read_file", {"path": "birds.py"})],
            chunk_delay=0.3,
        ),
        Reply(text="It is defined in", cut_after=2),
        Reply(text="In birds.py, and no, nowhere else."),
    )
    client = await start(tmp_path, wire)
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        turn = asyncio.ensure_future(
            client.call("session/prompt", prompt(sid, "where is zebrafinch defined?"))
        )
        await client.wait_for(lambda u: u["update"]["kind"] == "agent_message_chunk", 60)
        steer = await client.call("session/steer", prompt(sid, "and is zebrafinch used elsewhere?"))
        assert steer["queued"] is True
        assert (await asyncio.wait_for(turn, 60))["terminal"] == "completed"
    finally:
        await client.close()
    assert "stream_retry" in [u["update"]["kind"] for u in client.updates]
    replay, hits = await reload(tmp_path, wire, sid, "elsewhere")
    assert replay == [
        ("user_message_chunk", "where is zebrafinch defined?"),
        ("agent_message_chunk", "Reading it slowly."),
        ("tool_call", "read_file"),
        ("user_message_chunk", "and is zebrafinch used elsewhere?"),
        ("agent_message_chunk", "In birds.py, and no, nowhere else."),
    ]
    assert "user" in [h["role"] for h in hits]

"""Limits on what one request may cost the server: a file with one very long line is read in
bounded memory. Through `agentls serve` over real stdio; memory is the server's peak RSS."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, prompt, start

LINE_BYTES = 100 * 1024 * 1024


def peak_rss_mb(client: AgentClient) -> float:
    assert client._server is not None
    status = Path(f"/proc/{client._server.pid}/status").read_text()
    kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return kb / 1024


async def test_reading_a_file_with_a_100_mb_line_stays_in_bounded_memory(
    tmp_path, workspace, fake_llm
):
    with (workspace / "one-line.txt").open("wb") as f:
        f.write(b"x" * LINE_BYTES + b"\nsecond line\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "one-line.txt"}, id="read")]),
        Reply(text="read it"),
    )
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        before = peak_rss_mb(client)
        result = await client.call("session/prompt", prompt(sid, "read it"))
        grown = peak_rss_mb(client) - before
    finally:
        await client.close()
    assert result["terminal"] == "completed"
    done = [
        u["update"]
        for u in client.updates
        if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] == "completed"
    ]
    assert grown < 60, f"the server's peak memory grew by {grown:.0f} MB"
    assert "[line truncated, 104857600 bytes]" in done[0]["output"]
    assert "2: second line" in done[0]["output"]


async def test_a_prompt_over_the_size_limit_is_refused_before_it_is_stored(
    tmp_path, workspace, fake_llm
):
    fake_llm.script(Reply(text="small one"))
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        with pytest.raises(JsonRpcException) as refused:
            await client.call("session/prompt", prompt(sid, "x" * (20 * 1024 * 1024)))
        small = await client.call("session/prompt", prompt(sid, "hello"))
        listed = await client.call("session/search", {"query": "xxxxxxxx"})
    finally:
        await client.close()
    assert refused.value.code == -32602
    assert "limits.promptBytes" in refused.value.message and "20.0 MB" in refused.value.message
    assert small["terminal"] == "completed"
    assert listed["hits"] == []
    assert len(fake_llm.requests) == 1


async def test_the_prompt_size_limit_is_configurable(tmp_path, workspace, fake_llm):
    client = await start(tmp_path, workspace, fake_llm, user={"limits": {"promptBytes": 1000}})
    try:
        await client.initialize()
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        with pytest.raises(JsonRpcException) as refused:
            await client.call("session/prompt", prompt(sid, "y" * 2000))
    finally:
        await client.close()
    assert "1000 bytes" in refused.value.message


async def test_grep_on_a_file_with_a_100_mb_line_stays_in_bounded_memory(
    tmp_path, workspace, fake_llm
):
    with (workspace / "one-line.txt").open("wb") as f:
        f.write(b"x" * LINE_BYTES + b" needle\nneedle again\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("grep", {"pattern": "needle"}, id="grep")]),
        Reply(text="found"),
    )
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        before = peak_rss_mb(client)
        result = await client.call("session/prompt", prompt(sid, "find it"))
        grown = peak_rss_mb(client) - before
    finally:
        await client.close()
    assert result["terminal"] == "completed"
    assert grown < 60, f"the server's peak memory grew by {grown:.0f} MB"
    done = next(
        u["update"]
        for u in client.updates
        if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] == "completed"
    )
    found = json.loads(done["output"])
    assert found["matchCount"] == 2
    assert [(m["file"], m["line"]) for m in found["matches"]] == [
        ("one-line.txt", 1),
        ("one-line.txt", 2),
    ]
    assert found["matches"][0]["content"] == "x" * 200 + "…"


async def test_a_steer_over_the_size_limit_is_refused(tmp_path, workspace, fake_llm):
    from tests.test_e2e_resident import HeldReply, wait_until

    held = HeldReply("done")
    fake_llm.script(held)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        running = asyncio.ensure_future(client.call("session/prompt", prompt(sid, "wait")))
        await wait_until(held.asked.is_set, "the model call")
        big = [{"type": "text", "text": "z" * (20 * 1024 * 1024)}]
        try:
            with pytest.raises(JsonRpcException) as refused:
                await client.call("session/steer", {"sessionId": sid, "prompt": big})
        finally:
            held.held.set()
        result = await running
    finally:
        await client.close()
    assert refused.value.code == -32602 and "limits.promptBytes" in refused.value.message
    assert result["terminal"] == "completed"

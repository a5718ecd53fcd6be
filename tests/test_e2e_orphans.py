"""No command outlives the server that ran it: `kill -9` of `agentls serve` takes its bash jobs
(foreground and background, with everything they started), its MCP stdio servers and its
external agent down with it, and its watchdog ends once it has done so."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, new_session, prompt, server_env, start
from tests.conftest import write_project_config
from tests.mcp_servers import DEMO, demo_entry, pids
from tests.test_e2e_mcp import configure

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux parent death")

COMMAND = "sleep 300 & echo $! $$ > pids; sleep 300"


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


async def pids_written(path: Path, *, within: float = 120.0) -> list[int]:
    deadline = time.monotonic() + within
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, f"{path} was never written"
        await asyncio.sleep(0.05)
    return [int(p) for p in path.read_text().split()]


async def all_gone(pids: list[int], *, within: float = 60.0) -> bool:
    deadline = time.monotonic() + within
    while any(running(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.mark.parametrize("background", [True, False], ids=["background", "foreground"])
async def test_kill_9_of_the_server_kills_its_commands(tmp_path, workspace, fake_llm, background):
    call = FakeToolCall("bash", {"command": COMMAND, "run_in_background": background})
    fake_llm.script(Reply(tool_calls=[call]), Reply(text="started"))
    client = await start(tmp_path, workspace, fake_llm)
    pids: list[int] = []
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        turn = asyncio.ensure_future(client.call("session/prompt", prompt(session_id, "go")))
        pids = await pids_written(workspace / "pids")
        if background:
            assert (await asyncio.wait_for(turn, 60))["terminal"] == "completed"
        os.kill(client._server.pid, signal.SIGKILL)
        await asyncio.wait_for(client._server.wait(), 60)
        assert await all_gone(pids), "a command outlived the server"
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await client.close()


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                children = [int(p) for p in task.read_text().split()]
                found += children
                todo += children
    return found


async def test_kill_9_of_the_server_kills_its_mcp_servers(tmp_path, workspace, fake_llm):
    state = tmp_path / "state"
    state.mkdir()
    # The server leaves a child that does not care for the end of its input.
    server = shlex.join([sys.executable, str(DEMO)])
    entry = {**demo_entry(state), "command": "bash", "args": ["-c", f"sleep 300 & exec {server}"]}
    configure(tmp_path, workspace, fake_llm, {"mcpServers": {"demo": entry}})
    client = AgentClient()
    await client.start(server_env(tmp_path, OPENAI_API_KEY="test-key"))
    left: list[int] = []
    try:
        await client.initialize()
        await client.call("session/new", {"cwd": str(workspace)})
        assert len(pids(state)) == 1
        left = descendants(client._server.pid)
        assert len(left) >= 3, "the MCP server, its child and the watchdog"
        os.kill(client._server.pid, signal.SIGKILL)
        await asyncio.wait_for(client._server.wait(), 60)
        assert await all_gone(left), "a process outlived the server"
    finally:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await client.close()


async def test_kill_9_of_the_server_kills_its_external_agent(tmp_path, workspace, fake_llm):
    write_project_config(
        workspace,
        {"llm": {"provider": "openai", "model": "gpt-5.5", "baseUrl": fake_llm.openai_base_url}},
    )
    agent = shlex.join([sys.executable, "-m", "server.cli", "acp"])
    client = AgentClient()
    await client.start(
        server_env(tmp_path, OPENAI_API_KEY="test-key"),
        "--engine",
        "acp",
        "--engine-command",
        agent,
    )
    left: list[int] = []
    try:
        await client.initialize()
        await client.call("session/new", {"cwd": str(workspace)})
        left = descendants(client._server.pid)
        assert len(left) >= 2, "the external agent and the watchdog"
        os.kill(client._server.pid, signal.SIGKILL)
        await asyncio.wait_for(client._server.wait(), 60)
        assert await all_gone(left), "a process outlived the server"
    finally:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await client.close()

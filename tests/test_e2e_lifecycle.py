"""Front-door lifecycle over real stdio: `shutdown` during a turn, requests after `shutdown`,
and signals to the process (the turn ends `aborted`, is stored so, its commands die)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, new_session, prompt, server_env, start

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX process checks")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


async def appears(path: Path, within: float = 30) -> int:
    async def poll() -> int:
        while not (path.exists() and path.read_text().strip()):
            await asyncio.sleep(0.05)
        return int(path.read_text().split()[0])

    return await asyncio.wait_for(poll(), within)


async def dies(pid: int, within: float = 20) -> bool:
    async def poll() -> None:
        while alive(pid):
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), within)
    except TimeoutError:
        return False
    return True


def sleeping_bash(fake_llm) -> None:
    command = "echo $$ > shell.pid; sleep 60"
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("bash", {"command": command}, id="call_sleep")]),
        Reply(text="never reached"),
    )


async def test_shutdown_during_a_turn_ends_it_aborted_then_answers(tmp_path, workspace, fake_llm):
    sleeping_bash(fake_llm)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        turn = asyncio.create_task(client.call("session/prompt", prompt(session_id, "sleep")))
        shell = await appears(workspace / "shell.pid")
        await asyncio.wait_for(client.shutdown_async(None), 30)
        assert turn.done(), "shutdown answered before the turn's own response"
        result = turn.result()
        with pytest.raises(JsonRpcException) as refused:
            await asyncio.wait_for(client.call("engines/list", {}), 10)
        assert refused.value.code == -32600
        client.exit(None)
        assert await asyncio.wait_for(client._server.wait(), 10) == 0
    finally:
        await client.stop()
    assert result["terminal"] == "aborted" and result["stopReason"] == "cancelled"
    closing = [u["update"] for u in client.updates if u["update"]["kind"] == "turn_end"]
    assert closing == [
        {
            "kind": "turn_end",
            "terminal": "aborted",
            "stopReason": "cancelled",
            "usage": closing[0]["usage"],
        }
    ]
    assert await dies(shell)


EXIT_CODES = {signal.SIGTERM: 143, signal.SIGINT: 130, signal.SIGHUP: 129}


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    "signum",
    [
        pytest.param(signal.SIGTERM, id="SIGTERM"),
        pytest.param(signal.SIGINT, id="SIGINT"),
        pytest.param(signal.SIGHUP, id="SIGHUP"),
    ],
)
@pytest.mark.parametrize(
    "inherited",
    [
        pytest.param({}, id="default"),
        # what a background job of a non-interactive shell (`cmd &`, nohup, CI runners) gets
        pytest.param({"preexec_fn": ignore_sigint}, id="sigint-ignored"),
    ],
)
async def test_a_signal_to_serve_aborts_the_turn_stores_it_and_kills_its_commands(
    tmp_path, workspace, fake_llm, signum, inherited
):
    sleeping_bash(fake_llm)
    client = await start(tmp_path, workspace, fake_llm, spawn=inherited)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        turn = asyncio.create_task(client.call("session/prompt", prompt(session_id, "sleep")))
        shell = await appears(workspace / "shell.pid")
        client._server.send_signal(signum)
        code = await asyncio.wait_for(client._server.wait(), 30)
        turn.cancel()
    finally:
        await client.stop()
    assert code == EXIT_CODES[signum]
    assert await dies(shell)
    again = await start(tmp_path, workspace, fake_llm)
    try:
        await again.initialize()
        await again.call("session/load", {"sessionId": session_id})
    finally:
        await again.close()
    ends = [u["update"]["terminal"] for u in again.updates if u["update"]["kind"] == "turn_end"]
    assert ends == ["aborted"]


def stream_args(*extra: str) -> list[str]:
    return [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        *extra,
    ]


@pytest.mark.parametrize("door", ["streamjson", "acp"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_to_the_other_doors_kills_the_turns_commands(
    tmp_path, workspace, door, signum
):
    """Started with SIGINT ignored, as a background job of a non-interactive shell is."""
    import json
    import sys

    script = tmp_path / "script.json"
    command = "echo $$ > shell.pid; sleep 60"
    script.write_text(
        json.dumps(
            [
                {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
                {"text": "never"},
            ]
        )
    )
    env = server_env(tmp_path, AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script))
    if door == "streamjson":
        args = stream_args("--permission-mode", "bypassPermissions")
        first = [{"type": "user", "message": {"role": "user", "content": "sleep"}}]
    else:
        args = ["acp", "--permission-mode", "bypassPermissions"]
        first = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            },
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(workspace), "mcpServers": []},
            },
        ]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        *args,
        cwd=workspace,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        preexec_fn=ignore_sigint,
    )
    for line in first:
        proc.stdin.write(json.dumps(line).encode() + b"\n")
    if door == "acp":
        while True:
            reply = json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))
            if reply.get("id") == 2:
                break
        session_id = reply["result"]["sessionId"]
        proc.stdin.write(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "session/prompt",
                    "params": {
                        "sessionId": session_id,
                        "prompt": [{"type": "text", "text": "sleep"}],
                    },
                }
            ).encode()
            + b"\n"
        )
    shell = await appears(workspace / "shell.pid")
    proc.send_signal(signum)
    out = await asyncio.wait_for(proc.stdout.read(), 30)
    code = await asyncio.wait_for(proc.wait(), 30)
    assert code == EXIT_CODES[signum]
    assert await dies(shell)
    if door == "streamjson":
        init = next(json.loads(x) for x in out.splitlines() if b'"init"' in x)
        session_id = init["session_id"]
    assert await stored_terminals(tmp_path, session_id) == ["aborted"]


async def stored_terminals(tmp_path: Path, session_id: str) -> list[str]:
    client = AgentClient()
    await client.start(server_env(tmp_path, AGENTLS_PROVIDER="scripted"))
    try:
        await client.initialize()
        await client.call("session/load", {"sessionId": session_id})
    finally:
        await client.close()
    return [u["update"]["terminal"] for u in client.updates if u["update"]["kind"] == "turn_end"]


async def test_sigusr1_writes_the_stacks_to_stderr_and_serve_goes_on(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="still here"))
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        client._server.send_signal(signal.SIGUSR1)

        async def dumped() -> None:
            while b"serve" not in client.stderr or b"-- <Task" not in client.stderr:
                await asyncio.sleep(0.05)

        await asyncio.wait_for(dumped(), 30)
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "hi"))
    finally:
        await client.close()
    text = client.stderr.decode()
    assert "Current thread" in text and "server.serve(" in text
    assert result["terminal"] == "completed"

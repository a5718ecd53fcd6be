"""A signal to `agentls acp` or `agentls -p` mid-turn: the running prompt still gets its final
frame (ACP: the `session/prompt` response, stopReason `cancelled`; stream-json: the `result`
message, an error as for an interrupt) before the process exits 128 + the signal number."""

from __future__ import annotations

import asyncio
import json
import signal
import sys

import pytest

from tests.agent_client import server_env
from tests.test_e2e_lifecycle import EXIT_CODES, appears, dies, stream_args

SIGNALS = [
    pytest.param(signal.SIGTERM, id="SIGTERM"),
    pytest.param(signal.SIGINT, id="SIGINT"),
    pytest.param(signal.SIGHUP, id="SIGHUP"),
]


def rpc(id_: int, method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


async def spawn(tmp_path, workspace, args):
    script = tmp_path / "script.json"
    command = "echo $$ > shell.pid; sleep 60"
    tool_call = {"name": "bash", "arguments": {"command": command}}
    script.write_text(json.dumps([{"toolCalls": [tool_call]}, {"text": "never"}]))
    env = server_env(tmp_path, AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script))
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        *args,
        "--permission-mode",
        "bypassPermissions",
        cwd=workspace,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )


def send(proc, message: dict) -> None:
    proc.stdin.write(json.dumps(message).encode() + b"\n")


async def reply_to(proc, id_: int) -> dict:
    while True:
        message = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        if message.get("id") == id_:
            return message


async def interrupt(proc, workspace, signum) -> tuple[list[dict], int]:
    shell = await appears(workspace / "shell.pid", within=120)
    proc.send_signal(signum)
    out = await asyncio.wait_for(proc.stdout.read(), 60)
    code = await asyncio.wait_for(proc.wait(), 60)
    assert await dies(shell)
    return [json.loads(line) for line in out.splitlines() if line.strip()], code


@pytest.mark.parametrize("signum", SIGNALS)
async def test_a_signal_to_acp_answers_the_running_prompt(tmp_path, workspace, signum):
    proc = await spawn(tmp_path, workspace, ["acp"])
    send(proc, rpc(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    send(proc, rpc(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    session_id = (await reply_to(proc, 2))["result"]["sessionId"]
    prompt = [{"type": "text", "text": "sleep"}]
    send(proc, rpc(3, "session/prompt", {"sessionId": session_id, "prompt": prompt}))
    frames, code = await interrupt(proc, workspace, signum)
    answers = [f for f in frames if f.get("id") == 3]
    assert code == EXIT_CODES[signum]
    assert [a.get("result", {}).get("stopReason") for a in answers] == ["cancelled"], frames


@pytest.mark.parametrize("signum", SIGNALS)
async def test_a_signal_to_stream_json_writes_the_result(tmp_path, workspace, signum):
    proc = await spawn(tmp_path, workspace, stream_args())
    send(proc, {"type": "user", "message": {"role": "user", "content": "sleep"}})
    frames, code = await interrupt(proc, workspace, signum)
    assert code == EXIT_CODES[signum]
    assert frames and frames[-1]["type"] == "result", frames
    result = frames[-1]
    assert (result["subtype"], result["is_error"]) == ("error_during_execution", True), result

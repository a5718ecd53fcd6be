"""Cold start (spawn -> initialize result) and a warm two-step turn (read_file, then answer)."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lsp import Connection, bench_env
from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply


async def cold_start(home: Path) -> float:
    started = time.perf_counter()
    conn = await Connection.spawn(bench_env(home))
    await conn.initialize()
    elapsed = time.perf_counter() - started
    await conn.close()
    return elapsed


async def warm_turns(home: Path, fake: FakeModelServer, runs: int) -> list[float]:
    ws = home / "ws"
    (ws / ".agentls").mkdir(parents=True, exist_ok=True)
    (ws / "notes.txt").write_text("hello\n" * 50)
    (ws / ".agentls" / "config.json").write_text(
        json.dumps({"llm": {"provider": "openai", "model": "gpt-5.5"}})
    )
    env = bench_env(home, OPENAI_API_KEY="bench", AGENTLS_BASE_URL=fake.openai_base_url)
    conn = await Connection.spawn(env)
    await conn.initialize()
    session = (await conn.call("session/new", {"cwd": str(ws)}))["sessionId"]
    times = []
    for i in range(runs + 1):
        fake.script(
            Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
            Reply(text="It says hello fifty times."),
        )
        started = time.perf_counter()
        result = await conn.call(
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "read notes"}]},
        )
        assert result["terminal"] == "completed", result
        if i:  # the first turn imports the provider SDK
            times.append(time.perf_counter() - started)
    await conn.close()
    return times


async def first_turn_after_typing(home: Path, fake: FakeModelServer, pause_s: float) -> float:
    """A new session's first turn (one model call, Anthropic wire) sent `pause_s` after
    `session/new`, as when the user types it: prompt -> `completed`. What was started in the
    background when the session was made (the SDK's import, the shell parser's) is done by then
    and must not hold the turn up."""
    ws = home / "ws-typed"
    ws.mkdir(exist_ok=True)
    env = bench_env(
        home,
        AGENTLS_PROVIDER="anthropic",
        AGENTLS_MODEL="claude-sonnet-4-6",
        ANTHROPIC_API_KEY="bench",
        AGENTLS_BASE_URL=fake.base_url,
    )
    conn = await Connection.spawn(env)
    await conn.initialize()
    session = (await conn.call("session/new", {"cwd": str(ws)}))["sessionId"]
    await asyncio.sleep(pause_s)
    fake.script(Reply(text="Hello."))
    started = time.perf_counter()
    result = await conn.call(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    )
    elapsed = time.perf_counter() - started
    assert result["terminal"] == "completed", result
    await conn.close()
    return elapsed


def import_time() -> float:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import server.cli, server.frontends.jsonrpc"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    total = 0
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() in ("server.cli", "server.frontends.jsonrpc"):
            total += int(parts[1].strip())
    return total / 1e6


async def streamjson_start(home: Path) -> tuple[float, float, float]:
    """Process start -> `system/init`, -> the first `result` of a one-step scripted turn, and
    the exit tail: end of input after that result -> process exit."""
    env = bench_env(home, AGENTLS_PROVIDER="scripted")
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        env=env,
        cwd=home,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    line = {"type": "user", "message": {"role": "user", "content": "hi"}}
    proc.stdin.write(json.dumps(line).encode() + b"\n")
    init = result = 0.0
    closed = None
    async for raw in proc.stdout:
        frame = json.loads(raw)
        if frame["type"] == "system" and not init:
            init = time.perf_counter() - started
        if frame["type"] == "result":
            result = time.perf_counter() - started
            proc.stdin.close()
            closed = time.perf_counter()
    await proc.wait()
    tail = time.perf_counter() - closed if closed is not None else float("nan")
    return init, result, tail


def run(size: str = "full") -> dict[str, float]:
    repeats = 1 if size == "tiny" else 5
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as fake:
        home = Path(tmp)
        colds = [asyncio.run(cold_start(home)) for _ in range(repeats)]
        streams = [asyncio.run(streamjson_start(home)) for _ in range(repeats)]
        warm = asyncio.run(warm_turns(home, fake, repeats * 4))
        pause = 0.1 if size == "tiny" else 3.0
        typed = [asyncio.run(first_turn_after_typing(home, fake, pause)) for _ in range(repeats)]
    return {
        "cold_start_initialize_s": statistics.median(colds),
        "streamjson_start_to_init_s": statistics.median(s[0] for s in streams),
        "streamjson_start_to_result_s": statistics.median(s[1] for s in streams),
        "streamjson_exit_tail_ms": statistics.median(s[2] for s in streams) * 1000,
        "serve_import_s": statistics.median(import_time() for _ in range(3)),
        "warm_two_step_turn_ms": statistics.median(warm) * 1000,
        "warm_two_step_turn_p90_ms": sorted(warm)[int(len(warm) * 0.9) - 1] * 1000,
        "first_turn_after_typing_ms": statistics.median(typed) * 1000,
    }

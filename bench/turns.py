"""Turn overhead and memory of a real `agentls serve`, with a zero-latency scripted model.

- turn overhead: a 20-step task (read / grep / edit / bash) on a small repo; wall and server
  CPU per step, minus the time spent inside the tools (measured from the tool events): the
  first turn of a new server (which pays for what is loaded on first use), then the same task
  again in a new session of the same server (`warm_*`, the steady state); and the same again
  with the workspace a committed git repository (`repo_*`), where each step that may have
  changed the workspace reads `git status` again before the next model call.
- memory: RSS idle, after one session, and per additional idle session.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.lsp import Connection, bench_env

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def make_repo(root: Path) -> None:
    (root / "src").mkdir(parents=True, exist_ok=True)
    for i in range(20):
        (root / "src" / f"mod{i}.py").write_text(
            "".join(f"def f{j}(x):\n    return x + {j}\n\n" for j in range(40))
        )
    (root / "counter.txt").write_text("count = 0\n")


def twenty_steps() -> list[dict]:
    steps, count = [], 0
    for i in range(20):
        kind = i % 4
        if kind == 0:
            call = {"name": "read_file", "arguments": {"path": f"src/mod{i}.py", "limit": 50}}
        elif kind == 1:
            call = {"name": "grep", "arguments": {"pattern": f"return x \\+ {i}$"}}
        elif kind == 2:
            call = {
                "name": "edit_file",
                "arguments": {
                    "path": "counter.txt",
                    "old_string": f"count = {count}",
                    "new_string": f"count = {count + 1}",
                },
            }
            count += 1
        else:
            call = {"name": "bash", "arguments": {"command": "echo step"}}
        steps.append({"toolCalls": [call]})
    return [*steps, {"text": "All twenty steps done."}]


def commit_repo(root: Path) -> None:
    """`root` as a git repository with everything committed."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b",
                                                 "commit", "-qm", "start"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


async def one_turn(home: Path, runs: int, *, repo: bool = False) -> dict[str, float]:
    ws = home / ("repo" if repo else "ws")
    make_repo(ws)
    if repo:
        commit_repo(ws)
    script = home / "script.json"
    script.write_text(json.dumps(twenty_steps()))
    env = bench_env(
        home,
        AGENTLS_PROVIDER="scripted",
        AGENTLS_SCRIPT=str(script),
        AGENTLS_PERMISSION_MODE="bypassPermissions",
    )
    first: dict[str, list[float]] = {"wall": [], "cpu": [], "overhead": []}
    warm: dict[str, list[float]] = {"wall": [], "cpu": [], "overhead": []}
    for _ in range(runs):
        conn = await Connection.spawn(env)
        await conn.initialize()
        for figures in (first, warm):
            (ws / "counter.txt").write_text("count = 0\n")
            for key, value in (await timed_turn(conn, ws)).items():
                figures[key].append(value)
        await conn.close()
    prefix = "repo_" if repo else ""
    figures = {
        "turn_wall_per_step_ms": statistics.median(first["wall"]) * 1000,
        "turn_cpu_per_step_ms": statistics.median(first["cpu"]) * 1000,
        "turn_overhead_per_step_ms": statistics.median(first["overhead"]) * 1000,
        "warm_turn_wall_per_step_ms": statistics.median(warm["wall"]) * 1000,
        "warm_turn_cpu_per_step_ms": statistics.median(warm["cpu"]) * 1000,
        "warm_turn_overhead_per_step_ms": statistics.median(warm["overhead"]) * 1000,
    }
    return {prefix + key: value for key, value in figures.items()}


async def timed_turn(conn: Connection, ws: Path) -> dict[str, float]:
    """One 20-step turn in a new session: wall, server CPU and wall outside the tools, per step."""
    session = (await conn.call("session/new", {"cwd": str(ws)}))["sessionId"]
    conn.notifications.clear()
    cpu0, t0 = cpu_seconds(conn.proc.pid), time.perf_counter()
    result = await conn.call(
        "session/prompt",
        {"sessionId": session, "prompt": [{"type": "text", "text": "do the task"}]},
    )
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(conn.proc.pid) - cpu0
    assert result["terminal"] == "completed", result
    started: dict[str, float] = {}
    tool_time = 0.0
    for at, frame in conn.notifications:
        update = frame["params"]["update"]
        if update["kind"] == "tool_call_update":
            if update["status"] == "in_progress":  # the first; later ones carry output
                started.setdefault(update["toolCallId"], at)
            elif update["toolCallId"] in started:
                tool_time += at - started.pop(update["toolCallId"])
    steps = 21
    return {"wall": wall / steps, "cpu": cpu / steps, "overhead": (wall - tool_time) / steps}


async def memory(home: Path, sessions: int) -> dict[str, float]:
    ws = home / "mem"
    ws.mkdir(exist_ok=True)
    conn = await Connection.spawn(bench_env(home, AGENTLS_PROVIDER="scripted"))
    await conn.initialize()
    await asyncio.sleep(0.2)
    idle = rss_mb(conn.proc.pid)
    await conn.call("session/new", {"cwd": str(ws)})
    one = rss_mb(conn.proc.pid)
    for _ in range(sessions):
        await conn.call("session/new", {"cwd": str(ws)})
    many = rss_mb(conn.proc.pid)
    await conn.close()
    return {
        "rss_idle_mb": idle,
        "rss_one_session_mb": one,
        "rss_per_idle_session_mb": (many - one) / sessions,
    }


def run(size: str = "full") -> dict[str, float]:
    runs, sessions = (1, 5) if size == "tiny" else (5, 100)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        figures = asyncio.run(one_turn(home, runs))
        figures |= asyncio.run(one_turn(home, runs, repo=True))
        figures |= asyncio.run(memory(home, sessions))
    return figures

"""agentls against its peers: each front door against its peer on a read-and-answer task
(`bench.peer_doors`: Codex's app-server, the Claude Code CLI's stream-json, claude-agent-acp),
and the same scripted 20-step task through `agentls -p` and the Claude Code CLI bundled with
claude-agent-sdk, all against the loopback fake model.

Each part is skipped, with a note, when its peers are not installed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import peer_doors
from bench.peer_install import claude_binary
from bench.turns import make_repo
from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply

STEPS = 20


def call_for(step: int, peer: bool) -> FakeToolCall:
    """Step `step` of the task, in the tool vocabulary of the agent under test."""
    kind = step % 4
    if kind == 0:
        return (
            FakeToolCall("Read", {"file_path": f"src/mod{step}.py", "limit": 50})
            if peer
            else FakeToolCall("read_file", {"path": f"src/mod{step}.py", "limit": 50})
        )
    if kind == 1:
        pattern = f"return x \\+ {step}$"
        return (
            FakeToolCall("Grep", {"pattern": pattern, "output_mode": "content"})
            if peer
            else FakeToolCall("grep", {"pattern": pattern})
        )
    if kind == 2:
        n = step // 4
        edit = {"old_string": f"count = {n}", "new_string": f"count = {n + 1}"}
        return (
            FakeToolCall("Edit", {"file_path": "counter.txt", **edit})
            if peer
            else FakeToolCall("edit_file", {"path": "counter.txt", **edit})
        )
    command = {"command": "echo step"}
    return (
        FakeToolCall("Bash", {**command, "description": "echo"} if peer else command)
        if peer
        else FakeToolCall("bash", command)
    )


def scripted(peer: bool):
    def reply(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="ok")  # side requests (titles, summaries)
        done = sum(
            1
            for m in body["messages"]
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        )
        return (
            Reply(text="All steps done.")
            if done >= STEPS
            else Reply(tool_calls=[call_for(done, peer)])
        )

    return reply


def run_once(
    cmd: list[str], env: dict[str, str], ws: Path, fake: FakeModelServer, peer: bool
) -> float:
    make_repo(ws)
    for _ in range(STEPS + 5):
        fake.script(scripted(peer))
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ws, capture_output=True, timeout=300)
    elapsed = time.perf_counter() - started
    fake._queue.clear() if hasattr(fake, "_queue") else None
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {proc.stderr.decode()[-400:]}")
    if (ws / "counter.txt").read_text() != f"count = {STEPS // 4}\n":
        raise RuntimeError(f"{cmd[0]} did not complete the task")
    return elapsed


def peer_binary() -> str | None:
    """The Claude Code CLI the 20-step task runs against (None when not installed)."""
    return claude_binary()


def run(size: str = "full") -> dict[str, float]:
    return {**peer_doors.run(size), **twenty_steps(size)}


def twenty_steps(size: str) -> dict[str, float]:
    binary = peer_binary()
    if binary is None:
        print("peer: no Claude Code binary installed; skipped", file=sys.stderr)
        return {}
    repeats = 1 if size == "tiny" else 5
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as fake:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env |= {
            "HOME": str(home),
            "ANTHROPIC_API_KEY": "bench",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "XDG_CONFIG_HOME": str(home / "config"),
            "AGENTLS_HOME": str(home / "data"),
            "AGENTLS_BASE_URL": fake.base_url,
            "ANTHROPIC_BASE_URL": fake.base_url,
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        }
        ours = [
            sys.executable,
            "-m",
            "server.cli",
            "-p",
            "do the task",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-6",
            "--permission-mode",
            "bypassPermissions",
        ]
        theirs = [
            binary,
            "-p",
            "do the task",
            "--model",
            "claude-sonnet-4-6",
            "--allowedTools",
            "Read,Grep,Edit,Bash",
        ]
        agentls = [run_once(ours, env, home / f"a{i}", fake, False) for i in range(repeats)]
        peer = [run_once(theirs, env, home / f"p{i}", fake, True) for i in range(repeats)]
    a, p = statistics.median(agentls), statistics.median(peer)
    return {"agentls_20_step_task_s": a, "peer_20_step_task_s": p, "agentls_over_peer": a / p}

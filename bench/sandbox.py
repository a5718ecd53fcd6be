"""What the command sandbox costs: `bash -c true` through the shell tool's own runner
(`run_command`) on the machine and in a bubblewrap sandbox (`workspace-write`, network off, a
workspace with `.git` and control files to keep read-only), interleaved so both see the same
machine; the figure is the difference of the medians. Skipped where no sandbox can be made.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import anyio

from server.tools.child_env import child_env
from server.tools.sandbox import Sandbox, SandboxSettings, probe
from server.tools.shell import run_command

RUNS = {"full": 200, "tiny": 6}


async def _timed(workspace: Path, sandbox: Sandbox | None) -> float:
    started = time.perf_counter()
    result = await run_command(
        "true", cwd=workspace, env=child_env(None), timeout_ms=30_000, sandbox=sandbox
    )
    elapsed = time.perf_counter() - started
    assert result["exitCode"] == 0, result
    return elapsed


async def _measure(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agentls-bench-sandbox-") as tmp:
        workspace = Path(tmp)
        for name in (".git", ".agentls", ".claude"):
            (workspace / name).mkdir()
        (workspace / "AGENTS.md").write_text("rules\n")
        sandbox = Sandbox(SandboxSettings(), workspace, probe())
        plain, boxed = [], []
        try:
            for _ in range(3):  # warm both paths
                await _timed(workspace, None)
                await _timed(workspace, sandbox)
            for _ in range(runs):
                plain.append(await _timed(workspace, None))
                boxed.append(await _timed(workspace, sandbox))
        finally:
            sandbox.close()
    p, b = statistics.median(plain), statistics.median(boxed)
    # a difference of medians: a busy machine can make it come out a hair below zero
    overhead = max(b - p, 0.0)
    return {
        "bash_true_plain_ms": p * 1000,
        "bash_true_sandboxed_ms": b * 1000,
        "sandbox_overhead_ms": overhead * 1000,
        "bash_true_sandboxed_p90_ms": statistics.quantiles(boxed, n=10)[-1] * 1000,
    }


def run(size: str = "full") -> dict[str, float]:
    if not probe().available:
        return {}
    return anyio.run(_measure, RUNS[size])

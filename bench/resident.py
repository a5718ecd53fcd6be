"""A cold short task (read a file, answer: two model calls) as one process per task, the way
shell loops and the Claude Agent SDKs run agents: `agentls -p` on its own, `agentls -p` attached
to a resident server (`--connect`), the Claude Code CLI bundled with claude-agent-sdk, the SDK's
`query()` over each, and Codex's `codex exec`, on its own and attached to a resident
`codex app-server` (`--remote`) when Codex is installed. Interleaved rounds against the loopback
fake model (Anthropic wire; Responses for Codex); wall time and CPU (the command's, plus the
resident server's share while it ran).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import peer_install
from bench.peer_clients import end_group
from bench.peer_doors import codex_home
from bench.peer_install import claude_binary
from bench.peer_task import replies
from server.testing.fake_llm import FakeModelServer

ROOT = Path(__file__).resolve().parents[1]
TASK = "What is the first line of notes.txt?"
SDK_SCRIPT = """
import asyncio, sys
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query
async def main():
    options = ClaudeAgentOptions(cli_path=sys.argv[1] or None, model="claude-sonnet-4-6",
                                 allowed_tools=["Read"])
    async for m in query(prompt=sys.argv[2], options=options):
        if isinstance(m, ResultMessage):
            print(m.result)
asyncio.run(main())
"""


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # with its children


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str], ws: Path, resident: int | None) -> tuple:
    """Wall and CPU of one command (with the resident server's CPU meanwhile, when given)."""
    cpu0, started = children_cpu(), time.perf_counter()
    shared0 = cpu_of(resident) if resident else 0.0
    proc = subprocess.run(cmd, env=env, cwd=ws, capture_output=True, timeout=300)
    wall = time.perf_counter() - started
    cpu = children_cpu() - cpu0 + ((cpu_of(resident) - shared0) if resident else 0.0)
    if proc.returncode != 0 or b"alpha" not in proc.stdout:
        raise RuntimeError(f"{cmd[:3]} failed: {proc.stdout[-300:]!r} {proc.stderr[-600:]!r}")
    return wall, cpu


def run(size: str = "full") -> dict[str, float]:
    claude = claude_binary()
    codex = peer_install.codex_binary() if size == "tiny" else peer_install.install_codex()
    rounds = 1 if size == "tiny" else 7
    peer_install.CACHE.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="al-bench-") as tmp,
        tempfile.TemporaryDirectory(prefix="codex-home-", dir=peer_install.CACHE) as codex_dir,
        FakeModelServer() as fake,
    ):
        home = Path(tmp)
        run_dir = home / "run"
        run_dir.mkdir(mode=0o700)
        ws = home / "ws"
        ws.mkdir()
        (ws / "notes.txt").write_text("alpha\nbeta\n")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env |= {
            "HOME": str(home),
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": fake.base_url,
            "AGENTLS_BASE_URL": fake.base_url,
            "AGENTLS_PROVIDER": "anthropic",
            "AGENTLS_MODEL": "claude-sonnet-4-6",
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_RUNTIME_DIR": str(run_dir),
            "AGENTLS_HOME": str(home / "data"),
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "PYTHONPATH": str(ROOT),
            "CODEX_HOME": str(codex_home(Path(codex_dir), fake)),
        }
        agentls = [sys.executable, "-m", "server.cli"]
        p = ["-p", TASK]
        address = f"unix:{run_dir / 'bench.sock'}"
        wrapper = home / "agentls-attached"
        wrapper.write_text(
            f'#!/bin/sh\nexec {sys.executable} -m server.cli "$@" --connect {address}\n'
        )
        wrapper.chmod(0o700)
        plain = home / "agentls-plain"
        plain.write_text(f'#!/bin/sh\nexec {sys.executable} -m server.cli "$@"\n')
        plain.chmod(0o700)
        variants: dict[str, list[str]] = {
            "agentls_p": [*agentls, *p],
            "agentls_p_attached": [*agentls, *p, "--connect", address],
            "sdk_query_agentls": [sys.executable, "-c", SDK_SCRIPT, str(plain), TASK],
            "sdk_query_agentls_attached": [sys.executable, "-c", SDK_SCRIPT, str(wrapper), TASK],
        }
        # What every `query()` pays before any agent runs: the interpreter and the SDK import.
        variants["sdk_import"] = [sys.executable, "-c", "import claude_agent_sdk; print('alpha')"]
        if claude:
            variants["claude_p"] = [
                claude,
                *p,
                "--model",
                "claude-sonnet-4-6",
                "--allowedTools",
                "Read",
            ]
            variants["sdk_query_claude"] = [sys.executable, "-c", SDK_SCRIPT, "", TASK]
        residents = {"agentls": start_resident(agentls, address, env)}
        try:
            if codex:
                codex_socket = f"unix://{run_dir / 'codex.sock'}"
                exec_ = [str(codex), "exec", "--skip-git-repo-check"]
                variants["codex_exec"] = [*exec_, TASK]
                variants["codex_exec_attached"] = [*exec_, "--remote", codex_socket, TASK]
                residents["codex"] = start_codex_resident(codex, codex_socket, env)
            figures: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
            for n in range(rounds + 1):
                for name, cmd in variants.items():
                    fake.script(*(replies(ws) for _ in range(4)))
                    server = "codex" if name.startswith("codex") else "agentls"
                    shared = residents[server].pid if "attached" in name else None
                    measured = timed(cmd, env, ws, shared)
                    fake._queue.clear()
                    if n:  # the first round warms caches and the resident servers
                        figures[name].append(measured)
        finally:
            for proc in residents.values():
                end_group(proc)
    out: dict[str, float] = {}
    for name, runs in figures.items():
        out[f"{name}_wall_s"] = statistics.median(w for w, _ in runs)
        out[f"{name}_cpu_s"] = statistics.median(c for _, c in runs)
    # Net of the SDK's own start: the median of each round's difference (the two ran side by
    # side); at or under zero the difference is noise, reported as 0.
    for name in [n for n in figures if n.startswith("sdk_query")]:
        for i, kind in enumerate(("wall", "cpu")):
            paired = [
                q[i] - b[i] for q, b in zip(figures[name], figures["sdk_import"], strict=True)
            ]
            out[f"{name}_net_{kind}_s"] = max(0.0, statistics.median(paired))
    for ours, theirs in (
        ("agentls_p_attached", "claude_p"),
        ("agentls_p", "claude_p"),
        ("sdk_query_agentls_attached", "sdk_query_claude"),
        ("sdk_query_agentls", "sdk_query_claude"),
        ("sdk_query_agentls_attached_net", "sdk_query_claude_net"),
        ("agentls_p_attached", "agentls_p"),
        ("agentls_p", "codex_exec"),
        ("agentls_p_attached", "codex_exec_attached"),
        ("codex_exec_attached", "codex_exec"),
    ):
        for kind in ("wall", "cpu"):
            if out.get(f"{theirs}_{kind}_s"):
                out[f"{ours}_over_{theirs}_{kind}"] = (
                    out[f"{ours}_{kind}_s"] / out[f"{theirs}_{kind}_s"]
                )
    return out


def start_resident(agentls: list[str], address: str, env: dict[str, str]) -> subprocess.Popen:
    proc = subprocess.Popen(
        [*agentls, "serve", "--listen", address],
        env={k: v for k, v in env.items() if k != "ANTHROPIC_API_KEY"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if not line.startswith(b"agentls: listening on"):
        raise RuntimeError(f"the resident server did not start: {line!r}")
    return proc


def start_codex_resident(codex: Path, socket: str, env: dict[str, str]) -> subprocess.Popen:
    """`codex app-server` listening on a Unix socket, once the socket is there."""
    proc = subprocess.Popen(
        [str(codex), "app-server", "--listen", socket],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    path = Path(socket.removeprefix("unix://"))
    deadline = time.monotonic() + 30
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("codex app-server did not start listening")
        time.sleep(0.02)
    return proc

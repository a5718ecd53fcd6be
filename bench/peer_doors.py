"""Each agentls front door against its peer, in one interleaved run on the loopback fake model:
`agentls serve` (native JSON-RPC, Anthropic and OpenAI wires) against Codex's app-server
(Responses wire), stream-json against the Claude Code CLI's, `agentls acp` against
claude-agent-acp. The task: read notes.txt with one tool call, then answer.

A cold run spawns the agent, runs the task and closes stdin: wall (spawn to exit), exit tail
(stdin closed to exit), CPU of the process tree (user + sys, children included) and the tree's
PSS when the answer arrived; when its first model request left, the time from it to the second
(the agent's own work: the fake answers at once) and its size. A warm run does the task, then
five more turns in the same session or thread (one model call each): their median wall. Peers
not installed are skipped.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import peer_install
from bench.peer_clients import AcpDoor, CodexDoor, Door, NativeDoor, Process, StreamJsonDoor
from bench.peer_task import ANSWER, TASK, WARM, replies
from server.testing.fake_llm import FakeModelServer

ROOT = Path(__file__).resolve().parents[1]
WARM_TURNS = 5
STREAM_JSON = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]


@dataclass
class Variant:
    name: str
    cmd: list[str]
    env: dict[str, str]
    door: Callable[[Process, Path], Door]


def tree(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        found.append(current := todo.pop())
        todo.extend(parents.get(current, []))
    return found


def tree_pss_mb(pid: int) -> float:
    total = 0
    for member in tree(pid):
        try:
            rollup = Path(f"/proc/{member}/smaps_rollup").read_text()
        except OSError:
            continue
        total += sum(
            int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")
        )
    return total / 1024


def tree_cpu_s(pid: int) -> float:
    ticks = 0
    for member in tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def reaped_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_variant(
    v: Variant, ws: Path, log: Path, fake: FakeModelServer, *, warm: bool
) -> dict[str, float]:
    seen: list[tuple[float, int]] = []
    fake.script(*(replies(ws, seen) for _ in range(20)))
    cpu0 = reaped_cpu_s()
    process = Process(v.cmd, v.env, ws, log)
    try:
        figures = measured(v.name, process, v.door(process, ws), warm=warm, cpu0=cpu0)
    finally:
        process.kill()
        fake._queue.clear()
    (asked, size), (answered, _) = seen[0], seen[1]
    figures["first_request_s"] = asked - process.started
    figures["tool_step_s"] = answered - asked  # the fake answers at once: the agent's own work
    figures["prompt_kb"] = size / 1024
    return figures


def measured(
    name: str, process: Process, door: Door, *, warm: bool, cpu0: float
) -> dict[str, float]:
    door.open()
    answer = door.turn(TASK)
    answered = time.perf_counter() - process.started
    if ANSWER not in answer:
        raise RuntimeError(f"{name} answered {answer!r}")
    figures = {"answer_s": answered, "pss_mb": tree_pss_mb(process.pid)}
    if warm:
        walls = []
        for n in range(WARM_TURNS):
            started = time.perf_counter()
            door.turn(f"{WARM} {n}")
            walls.append(time.perf_counter() - started)
        figures["warm_turn_s"] = statistics.median(walls)
    live = tree_cpu_s(process.pid)
    closing = time.perf_counter()
    tail, by_itself = process.close()
    figures["exit_tail_s"], figures["exits_at_eof"] = tail, float(by_itself)
    figures["wall_s"] = closing - process.started + tail
    figures["cpu_s"] = max(reaped_cpu_s() - cpu0, live)
    return figures


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return env | {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "AGENTLS_HOME": str(home / "data"),
        "PYTHONPATH": str(ROOT),
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def codex_home(config: Path, fake: FakeModelServer) -> Path:
    """A CODEX_HOME whose only provider is the fake, on the Responses wire, with no auth."""
    (config / "config.toml").write_text(
        'model = "gpt-5.5"\n'
        'model_provider = "fake"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "check_for_update_on_startup = false\n"
        "[analytics]\nenabled = false\n"
        "[feedback]\nenabled = false\n"
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{fake.openai_base_url}"\n'
        'wire_api = "responses"\n'
    )
    return config


def variants(
    home: Path, fake: FakeModelServer, codex: Path | None, codex_dir: Path
) -> list[Variant]:
    env = base_env(home)
    agentls = [sys.executable, "-m", "server.cli"]
    anthropic = env | {
        "AGENTLS_PROVIDER": "anthropic",
        "AGENTLS_MODEL": "claude-sonnet-4-6",
        "AGENTLS_BASE_URL": fake.base_url,
        "ANTHROPIC_API_KEY": "bench",
    }
    openai = env | {
        "AGENTLS_PROVIDER": "openai",
        "AGENTLS_MODEL": "gpt-4.1",
        "AGENTLS_BASE_URL": fake.openai_base_url,
        "OPENAI_API_KEY": "bench",
    }
    found = [
        Variant("agentls_serve", [*agentls, "serve"], anthropic, NativeDoor),
        Variant("agentls_serve_openai", [*agentls, "serve"], openai, NativeDoor),
        Variant("agentls_stream_json", [*agentls, "-p", *STREAM_JSON], anthropic, StreamJsonDoor),
        Variant("agentls_acp", [*agentls, "acp"], anthropic, AcpDoor),
    ]
    if codex is not None:
        codex_env = env | {"CODEX_HOME": str(codex_home(codex_dir, fake))}
        found.append(Variant("codex_app_server", [str(codex), "app-server"], codex_env, CodexDoor))
    claude = peer_install.claude_binary()
    claude_env = env | {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "bench"}
    if claude is not None:
        cmd = [claude, "-p", *STREAM_JSON, "--model", "claude-sonnet-4-6", "--allowedTools", "Read"]
        found.append(Variant("claude_stream_json", cmd, claude_env, StreamJsonDoor))
    adapter = peer_install.acp_adapter()
    if claude is not None and adapter is not None:
        # Claude Code refuses to skip permissions as root unless told it runs in a sandbox.
        acp_env = claude_env | {"CLAUDE_CODE_EXECUTABLE": claude, "IS_SANDBOX": "1"}
        found.append(Variant("claude_agent_acp", [str(adapter)], acp_env, AcpDoor))
    return found


# The official SDK each agentls variant loads: its import, timed in the same round, is what
# the cold CPU is net of ("agentls's own share").
SDKS = {
    "agentls_serve": "anthropic",
    "agentls_serve_openai": "openai",
    "agentls_stream_json": "anthropic",
    "agentls_acp": "anthropic",
}
PAIRS = (
    ("agentls_serve", "codex_app_server"),
    ("agentls_serve_openai", "codex_app_server"),
    ("agentls_stream_json", "claude_stream_json"),
    ("agentls_acp", "claude_agent_acp"),
)
COLD_FIGURES = (
    "wall_s",
    "cpu_s",
    "pss_mb",
    "exit_tail_s",
    "answer_s",
    "exits_at_eof",
    "first_request_s",
    "tool_step_s",
    "prompt_kb",
)


def kinds(size: str) -> tuple[bool, ...]:
    """The runs each variant gets a round: a cold one and a warm one (at tiny size only the
    warm one, which goes through both paths)."""
    return (True,) if size == "tiny" else (False, True)


def run(size: str = "full") -> dict[str, float]:
    codex = peer_install.codex_binary() if size == "tiny" else peer_install.install_codex()
    rounds = 1 if size == "tiny" else 9
    peer_install.CACHE.mkdir(parents=True, exist_ok=True)
    # Codex sets up its helper commands only when its home is outside the temporary directory.
    with (
        tempfile.TemporaryDirectory(prefix="al-peer-") as tmp,
        tempfile.TemporaryDirectory(prefix="codex-home-", dir=peer_install.CACHE) as codex_dir,
        FakeModelServer() as fake,
    ):
        home = Path(tmp)
        ws = home / "ws"
        ws.mkdir()
        (ws / "notes.txt").write_text("alpha\nbeta\n")
        chosen = variants(home, fake, codex, Path(codex_dir))
        names = {v.name for v in chosen}
        if not any(peer in names for _, peer in PAIRS):
            print("peer: no peer agent installed; door comparison skipped", file=sys.stderr)
            return {}
        runs: dict[str, list[dict[str, float]]] = {}
        log = home / "stderr.log"
        for n in range(rounds + (0 if size == "tiny" else 1)):
            for v in chosen:
                for warm in kinds(size):
                    figures = run_variant(v, ws, log, fake, warm=warm)
                    if n or size == "tiny":  # round 0 of a full run warms the caches
                        runs.setdefault(v.name + ("_warm" if warm else ""), []).append(figures)
            for sdk in sorted({SDKS[v.name] for v in chosen if v.name in SDKS}):
                figures = sdk_import(sdk, ws, chosen[0].env)
                if n or size == "tiny":
                    runs.setdefault(f"sdk_{sdk}_import", []).append(figures)
        if fake.refusals:
            raise RuntimeError(f"the fake model refused: {fake.refusals}")
    return summary(runs)


def sdk_import(module: str, ws: Path, env: dict[str, str]) -> dict[str, float]:
    """A fresh interpreter that imports the SDK and exits: wall and CPU."""
    cpu0, started = reaped_cpu_s(), time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], env=env, cwd=ws, check=True)
    return {"wall_s": time.perf_counter() - started, "cpu_s": reaped_cpu_s() - cpu0}


def own_share(runs: dict[str, list[dict[str, float]]]) -> dict[str, float]:
    """Each agentls variant's cold CPU net of its SDK's import: the median of the rounds'
    differences (the two ran in the same round)."""
    out: dict[str, float] = {}
    for name, sdk in SDKS.items():
        cold, imports = runs.get(name), runs.get(f"sdk_{sdk}_import")
        if cold and imports:
            paired = [c["cpu_s"] - i["cpu_s"] for c, i in zip(cold, imports, strict=True)]
            out[f"{name}_own_cpu_s"] = statistics.median(paired)
    return out


def summary(runs: dict[str, list[dict[str, float]]]) -> dict[str, float]:
    out: dict[str, float] = own_share(runs)
    for name, measured in runs.items():
        if name.startswith("sdk_"):
            for key in ("wall_s", "cpu_s"):
                out[f"{name}_{key}"] = statistics.median(m[key] for m in measured)
            continue
        keys = ("warm_turn_s",) if name.endswith("_warm") else COLD_FIGURES
        for key in keys:
            out[f"{name.removesuffix('_warm')}_{key}"] = statistics.median(m[key] for m in measured)
    for ours, theirs in PAIRS:
        for key in ("wall_s", "cpu_s", "pss_mb", "warm_turn_s"):
            if out.get(f"{theirs}_{key}") and f"{ours}_{key}" in out:
                ratio = out[f"{ours}_{key}"] / out[f"{theirs}_{key}"]
                out[f"{ours}_over_{theirs}_{key.rsplit('_', 1)[0]}"] = ratio
    return out

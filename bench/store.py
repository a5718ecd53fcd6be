"""Session store cost: event-stream throughput through the session service with persistence
on vs off, database bytes per 1,000 events, and what persistence adds to each turn (the
snapshot and the flush at the terminal), measured on short turns; and, through a real `agentls
-p` task of ten tool calls, trace bytes per model call and database bytes per answer byte; and
the writer's CPU per batch while a 54 KB answer streams at a model's pace (one chunk a batch).

An in-process engine streams a realistic mix (message and thought chunks, tool cards with
output, step ends) as fast as it can; the channel serializes each update as a front door would.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import anyio

from protocol.methods import NewSessionParams, PromptParams
from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    StepFinish,
    ToolCall,
    ToolCallUpdate,
    Usage,
)
from server.engines.base import EngineCapabilities
from server.providers.messages import Usage as ModelUsage
from server.sessions.model import ClientCapabilities
from server.sessions.service import SessionService
from server.sessions.store import Store
from server.turn import TurnOutcome

SIZES = {"tiny": (2, 500, 5), "full": (20, 5000, 200)}
"""size -> (long turns, events per long turn, short turns of 20 events)"""


class NullChannel:
    capabilities = ClientCapabilities()

    def __init__(self) -> None:
        self.bytes = 0

    def send_update(self, params) -> None:
        self.bytes += len(json.dumps(params.to_wire()))


def events(count: int):
    for i in range(count):
        slot = i % 100
        if slot < 90:
            yield AgentMessageChunk(text=f"token{i} and some more words here ")
        elif slot < 94:
            yield AgentThoughtChunk(text=f"thinking about step {i} ")
        elif slot in (94, 96):
            yield ToolCall(
                tool_call_id=f"c{i}",
                name="read_file",
                title=f"Read src/module_{i}.py",
                tool_kind="read",
                input={"path": f"src/module_{i}.py"},
            )
        elif slot in (95, 97):
            yield ToolCallUpdate(tool_call_id=f"c{i - 1}", status="completed", output="x" * 500)
        else:
            yield StepFinish(step=i, finish_reason="tool_use", usage=Usage())


class StreamingEngine:
    """Emits `per_turn` updates per turn, yielding to the event loop now and then."""

    id = "native"
    capabilities = EngineCapabilities()

    def __init__(self, per_turn: int):
        self.per_turn = per_turn

    async def create_session(self, spec):
        return spec

    def describe(self, handle):
        return {"provider": "bench", "model": "bench", "mode": "default"}

    def snapshot(self, handle, *, since=0):
        return {"provider": "bench", "model": "bench", "mode": "default", "history": []}

    def unsent_steers(self, handle):
        return []

    async def run_turn(self, handle, turn, sink):
        for n, update in enumerate(events(self.per_turn)):
            sink.emit(update)
            if n % 50 == 0:
                await anyio.lowlevel.checkpoint()
        return TurnOutcome("end_turn", ModelUsage(1, 1))

    async def close_session(self, handle):
        pass

    async def dispose(self):
        pass


async def stream(home: Path, turns: int, per_turn: int, store: Store | None) -> float:
    service = SessionService({"native": StreamingEngine(per_turn)}, NullChannel(), store=store)
    info = await service.new_session(NewSessionParams(cwd=str(home)))
    prompt = {"sessionId": info.session_id, "prompt": [{"type": "text", "text": "go"}]}
    started = time.perf_counter()
    for _ in range(turns):
        await service.prompt(PromptParams.model_validate(prompt))
    elapsed = time.perf_counter() - started
    await service.close_all()
    return elapsed


def db_bytes(path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


async def long_turn(home: Path, steps: int) -> float:
    """Milliseconds per step of one turn of `steps` read_file calls through the native engine
    and a stored session (scripted model, in process): whatever grows with the history shows
    as a higher figure for the longer turn."""
    from server.engines.native import NativeEngine
    from server.providers.scripted import ScriptedProvider, ScriptedReply

    workspace = home / f"long{steps}"
    workspace.mkdir()
    for i in range(20):
        lines = "".join(f"def f{j}(x):\n    return x + {j}\n\n" for j in range(40))
        (workspace / f"m{i}.py").write_text(lines)
    calls = [("read_file", {"path": f"m{i % 20}.py", "limit": 50}) for i in range(steps)]
    replies = [ScriptedReply(tool_calls=[c]) for c in calls] + [ScriptedReply(text="done")]
    provider = ScriptedProvider.from_replies(replies)
    engine = NativeEngine(provider_factory=lambda _s: provider, environ={"HOME": str(home)})
    flags = {"llm": {"provider": "scripted", "model": "scripted"}, "maxSteps": steps + 10}
    store = Store(home / f"long{steps}.db")
    service = SessionService({"native": engine}, NullChannel(), store=store, flags=flags)
    info = await service.new_session(NewSessionParams(cwd=str(workspace)))
    prompt = {"sessionId": info.session_id, "prompt": [{"type": "text", "text": "go"}]}
    started = time.perf_counter()
    await service.prompt(PromptParams.model_validate(prompt))
    elapsed = time.perf_counter() - started
    await service.close_all()
    return elapsed / (steps + 1) * 1000


def multi_step(home: Path, reads: int) -> tuple[float, float]:
    """A real `agentls -p` task of `reads` read_file calls, then an answer, on the fake model:
    trace bytes per model call, and database bytes per byte of the answer."""
    import sqlite3
    import subprocess
    import sys

    from bench.lsp import bench_env
    from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply

    workspace = home / "multi"
    workspace.mkdir()
    for i in range(reads):
        (workspace / f"f{i}.txt").write_text(f"line {i}\n" * 20)
    answer = "All the files hold numbered lines. " * 10
    with FakeModelServer() as fake:
        steps = [
            Reply(tool_calls=[FakeToolCall("read_file", {"path": f"f{i}.txt"})])
            for i in range(reads)
        ]
        fake.script(*steps, Reply(text=answer))
        argv = ["-p", "read every file", "--provider", "anthropic", "--model", "claude-sonnet-4-6"]
        subprocess.run(
            [sys.executable, "-m", "server.cli", *argv, "--base-url", fake.anthropic_base_url],
            cwd=workspace,
            env=bench_env(home, ANTHROPIC_API_KEY="bench"),
            capture_output=True,
            check=True,
        )
    [db] = (home / "data").rglob("*.db")
    conn = sqlite3.connect(db)
    (traced,) = conn.execute("SELECT sum(length(data)) FROM trace").fetchone()
    conn.close()
    return traced / (reads + 1), db_bytes(db) / len(answer)


def rewrites(home: Path, size: int, times: int) -> float:
    """A real `agentls -p` turn that rewrites one `size`-byte file `times` times (different
    text each time) with write_file, on the scripted model: bytes the data dir (database and
    checkpoints) grew by, per byte the turn wrote."""
    import random
    import subprocess
    import sys

    from bench.lsp import bench_env

    workspace = home / "rewrites"
    workspace.mkdir()
    alphabet = "abcdefghijklmnopqrstuvwxyz \n"
    replies: list[dict] = []
    for n in range(times):
        text = "".join(random.Random(n).choices(alphabet, k=size))
        call = {"name": "write_file", "arguments": {"path": "big.txt", "content": text}}
        replies.append({"toolCalls": [call]})
    script = home / "rewrites.json"
    script.write_text(json.dumps([*replies, {"text": "done"}]))
    data = home / "rewrites-data"
    env = bench_env(home, AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script))
    env.update(AGENTLS_HOME=str(data), AGENTLS_SANDBOX="off")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli",
            "-p",
            "rewrite it",
            "--permission-mode",
            "acceptEdits",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        check=True,
    )
    stored = sum(p.stat().st_size for p in data.rglob("*") if p.is_file() and p.suffix != ".log")
    return stored / (size * times)


def paced_answer(home: Path, chunks: int) -> float:
    """A long answer streamed at a model's pace, one chunk per writer batch (as the store sees
    a reply whose chunks arrive further apart than its 5 ms batching): the writer thread's CPU
    per batch, in microseconds, through a `Writer` on a real database file."""
    from server.sessions.schema import connect
    from server.sessions.writer import Writer

    path = home / "paced.db"
    Store(path).close()
    conn = connect(path)
    writer = Writer(conn)
    writer.apply([("session", "s", str(home), "native", {}, 0.0)])
    writer.apply([("turn", "s", "t", "go", "go", "bench", 0.0, 0)])
    started = time.process_time()
    for seq in range(1, chunks + 1):
        chunk = {"kind": "agent_message_chunk", "text": f"word{seq:05d} and more "}
        writer.apply([("update", "s", "t", seq, 0.0, chunk)])
    elapsed = time.process_time() - started
    conn.close()
    return elapsed / chunks * 1_000_000


def run(size: str = "full") -> dict[str, float]:
    turns, per_turn, short = SIZES[size]
    total = turns * per_turn
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        off = anyio.run(stream, home, turns, per_turn, None)
        db = home / "sessions.db"
        on = anyio.run(stream, home, turns, per_turn, Store(db))
        size_bytes = db_bytes(db)
        short_off = anyio.run(stream, home, short, 20, None)
        short_on = anyio.run(stream, home, short, 20, Store(home / "short.db"))
        per_call, per_answer_byte = multi_step(home, 3 if size == "tiny" else 10)
        short_steps, long_steps = (5, 20) if size == "tiny" else (50, 400)
        short_turn = anyio.run(long_turn, home, short_steps)
        long_turn_ms = anyio.run(long_turn, home, long_steps)
        paced = paced_answer(home, 300 if size == "tiny" else 3000)
        stored_per_written = rewrites(home, 2 * 1024 * 1024, 2 if size == "tiny" else 8)
    return {
        "events_per_s_store_off": total / off,
        "events_per_s_store_on": total / on,
        "throughput_ratio_on_off": off / on,
        "db_bytes_per_1000_events": size_bytes / total * 1000,
        "turn_overhead_ms": max(0.0, short_on - short_off) / short * 1000,
        "trace_bytes_per_model_call": per_call,
        "db_bytes_per_answer_byte": per_answer_byte,
        f"ms_per_step_{short_steps}_step_turn": short_turn,
        f"ms_per_step_{long_steps}_step_turn": long_turn_ms,
        "writer_us_per_batch_paced_answer": paced,
        "bytes_stored_per_byte_written_2mb_x8": stored_per_written,
    }


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key:<28} {value:12.3f}")

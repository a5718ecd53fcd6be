"""Many sessions streaming at once through one `agentls serve`: events lost (must be 0) and the
latency each delta picks up between the fake model's socket and the client (p50/p99)."""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from pathlib import Path

from bench.lsp import Connection, bench_env
from server.testing.fake_llm import FakeModelServer, Reply

SIZES = {"tiny": (5, 20), "full": (50, 100)}
"""size -> (sessions, deltas per session)"""
PACE = 0.02


async def measure(home: Path, fake: FakeModelServer, sessions: int, deltas: int) -> dict:
    ws = home / "ws"
    (ws / ".agentls").mkdir(parents=True, exist_ok=True)
    (ws / ".agentls" / "config.json").write_text(
        json.dumps({"llm": {"provider": "openai", "model": "gpt-4.1", "maxRetries": 0}}))
    env = bench_env(home, OPENAI_API_KEY="bench", AGENTLS_BASE_URL=fake.openai_base_url,
                    AGENTLS_STORE="0")
    conn = await Connection.spawn(env)
    try:
        await conn.initialize()
        ids = [(await conn.call("session/new", {"cwd": str(ws)}))["sessionId"]
               for _ in range(sessions)]
        fake.script(Reply(text="warm"))
        await conn.call("session/prompt", {"sessionId": ids[0],
                                           "prompt": [{"type": "text", "text": "warm"}]})
        conn.notifications.clear()
        for k in range(sessions):
            fake.script(lambda body, k=k: Reply(
                text=" ".join(f"s{k}-w{i}" for i in range(deltas)), chunk_delay=PACE))
        results = await asyncio.gather(*(
            conn.call("session/prompt", {"sessionId": sid,
                                         "prompt": [{"type": "text", "text": "go"}]})
            for sid in ids))
    finally:
        await conn.close()
    assert all(r["terminal"] == "completed" for r in results), results
    added, received = [], 0
    for at, frame in conn.notifications:
        update = frame["params"]["update"]
        if update["kind"] != "agent_message_chunk":
            continue
        received += 1
        key, word = update["text"].strip().split("-", 1)
        sent = fake.delta_log.get((key, int(word[1:]) + 1))
        if sent is not None:
            added.append((at - sent) * 1000)
    added.sort()
    return {
        "concurrent_sessions": float(sessions),
        "events_lost": float(sessions * deltas - received),
        "concurrent_delta_latency_p50_ms": statistics.median(added),
        "concurrent_delta_latency_p99_ms": added[min(len(added) - 1, int(len(added) * 0.99))],
    }


def run(size: str = "full") -> dict[str, float]:
    sessions, deltas = SIZES[size]
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as fake:
        return asyncio.run(measure(Path(tmp), fake, sessions, deltas))

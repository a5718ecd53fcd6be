"""Streaming from a provider to the client: text deltas per second through `agentls serve`, and
the latency each delta picks up between the fake model's socket and the client (p50/p99), for
the Anthropic and OpenAI paths.

Throughput streams a long reply with no pause between deltas; latency streams a paced reply
(2 ms apart) so queueing does not dominate. The fake server and the client run in this process,
so both timestamps come from the same `perf_counter`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from pathlib import Path

from bench.lsp import Connection, bench_env
from server.testing.fake_llm import FakeModelServer, Reply

PATHS = {
    "anthropic": ("claude-sonnet-4-6", "ANTHROPIC_API_KEY", "anthropic_base_url"),
    "openai": ("gpt-4.1", "OPENAI_API_KEY", "openai_base_url"),
}
SIZES = {"tiny": (200, 40), "full": (5000, 500)}
"""size -> (deltas in the throughput reply, deltas in the paced latency reply)"""
PACE = 0.002


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


async def turn(conn: Connection, session: str, fake: FakeModelServer, reply: Reply):
    """Run one turn; returns (delta send times, delta receive times)."""
    fake.delta_times.clear()
    conn.notifications.clear()
    fake.script(reply)
    params = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
    result = await conn.call("session/prompt", params)
    assert result["terminal"] == "completed", result
    received = [
        at
        for at, frame in conn.notifications
        if frame["params"]["update"]["kind"] == "agent_message_chunk"
    ]
    return list(fake.delta_times), received


async def measure(provider: str, home: Path, fake: FakeModelServer, size: str) -> dict[str, float]:
    model, key, url_attr = PATHS[provider]
    ws = home / f"ws-{provider}"
    (ws / ".agentls").mkdir(parents=True, exist_ok=True)
    llm = {"provider": provider, "model": model, "maxRetries": 0}
    (ws / ".agentls" / "config.json").write_text(json.dumps({"llm": llm}))
    # A project config may not set the base URL; the user config (under XDG_CONFIG_HOME) may.
    user = home / "config" / "agentls" / "config.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"llm": {"baseUrl": getattr(fake, url_attr)}}))
    conn = await Connection.spawn(bench_env(home, **{key: "bench"}))
    try:
        await conn.initialize()
        session = (await conn.call("session/new", {"cwd": str(ws)}))["sessionId"]
        await turn(conn, session, fake, Reply(text="warm up"))  # imports the SDK
        bulk, paced = SIZES[size]
        _, got = await turn(conn, session, fake, Reply(text=words(bulk)))
        sent, received = await turn(conn, session, fake, Reply(text=words(paced), chunk_delay=PACE))
    finally:
        await conn.close()
    assert len(got) == bulk and len(received) == len(sent) == paced
    added = sorted((r - s) * 1000 for s, r in zip(sent, received, strict=True))
    return {
        f"{provider}_deltas_per_s": (bulk - 1) / (got[-1] - got[0]),
        f"{provider}_delta_latency_p50_ms": statistics.median(added),
        f"{provider}_delta_latency_p99_ms": added[min(len(added) - 1, int(len(added) * 0.99))],
    }


def run(size: str = "full") -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as fake:
        for provider in PATHS:
            results |= asyncio.run(measure(provider, Path(tmp), fake, size))
    return results


if __name__ == "__main__":
    import sys

    for name, value in run(sys.argv[1] if len(sys.argv) > 1 else "full").items():
        print(f"{name:<36} {value:10.3f}")

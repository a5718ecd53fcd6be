"""The embedded local model (`agentls[local]`): load time, time to first token, prompt reading
and generation speed, and resident memory with the model loaded.

Figures come from llama.cpp's own timings for one cold prompt (no prompt cache) and one
generation; load time is the in-process server start, not counting the one-time unpacking of
the model into the cache (reported as `unpack_s` when it happened). Without the extra
installed this returns {} and says so on stderr.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

from server.providers import local_model, local_runtime

SIZES = {"tiny": (40, 8), "full": (150, 128)}
"""size -> (prompt words, generated tokens)"""
THREADS = 2


def run(size: str = "full") -> dict[str, float]:
    if not local_model.available():
        print(
            f"bench local: skipped, the local model is not installed ({local_model.INSTALL_HINT})",
            file=sys.stderr,
        )
        return {}
    words, tokens = SIZES[size]
    started = time.perf_counter()
    path = local_model.ensure_model(local_model.DEFAULT_MODEL)
    unpack = time.perf_counter() - started
    runtime = local_runtime.load(local_runtime.RuntimeConfig(path=path, threads=THREADS))
    figures = {"load_s": runtime.load_seconds, "rss_mb": _rss_mb()}
    if unpack > 1.0:
        figures["unpack_s"] = unpack
    try:
        figures.update(_generate(runtime, words, tokens))
    finally:
        del runtime
        local_runtime.unload()  # the caller (the smoke test's process) gets its 2 GB back
    return figures


def _generate(runtime: local_runtime.LocalRuntime, words: int, tokens: int) -> dict[str, float]:
    text = " ".join(f"item{i}" for i in range(words))
    body = {
        "messages": [{"role": "user", "content": f"Here is a list: {text}. Count to 500."}],
        "max_tokens": tokens,
        "temperature": 0.0,
        "stream": True,
        "cache_prompt": False,
    }
    first: list[float] = []
    last: dict[str, Any] = {}
    started = time.perf_counter()

    def on_chunk(chunk: dict[str, Any]) -> bool:
        choices = chunk.get("choices") or []
        if not first and any((c.get("delta") or {}).get("content") for c in choices):
            first.append(time.perf_counter() - started)
        if chunk.get("timings"):
            last.update(chunk["timings"])
        return False

    runtime.complete(body, on_chunk)
    return {
        "ttft_s": first[0] if first else 0.0,
        "prompt_tokens": float(last.get("prompt_n", 0)),
        "prompt_tokens_per_s": float(last.get("prompt_per_second", 0.0)),
        "gen_tokens_per_s": float(last.get("predicted_per_second", 0.0)),
        "rss_mb_after": _rss_mb(),
    }


def _rss_mb() -> float:
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    for key, value in run(sys.argv[1] if len(sys.argv) > 1 else "full").items():
        print(f"{key:<20} {value:10.3f}")

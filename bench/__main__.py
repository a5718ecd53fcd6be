"""`python -m bench`: run every benchmark, print a table, write bench/results/latest.json."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

from bench import (
    concurrency,
    fuzz,
    local,
    local_eval,
    peer,
    providers,
    resident,
    sandbox,
    spine,
    store,
    tools,
    turns,
)

SUITES = {
    "spine": spine.run,
    "turns": turns.run,
    "providers": providers.run,
    "tools": tools.run,
    "sandbox": sandbox.run,
    "store": store.run,
    "concurrency": concurrency.run,
    "peer": peer.run,
    "resident": resident.run,
    "local": local.run,
    "local-eval": local_eval.run,
    "fuzz": fuzz.run,
}


def main(argv: list[str]) -> int:
    size = "tiny" if "--tiny" in argv else "full"
    chosen = [a for a in argv if not a.startswith("--")] or list(SUITES)
    results: dict[str, dict[str, float]] = {}
    for name in chosen:
        started = time.perf_counter()
        results[name] = SUITES[name](size)
        print(f"[{name}] {time.perf_counter() - started:.1f} s", file=sys.stderr)
    width = max(len(k) for r in results.values() for k in r)
    for name, figures in results.items():
        print(f"[{name}]")
        for key, value in figures.items():
            print(f"  {key:<{width}}  {value:10.3f}")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "python": platform.python_version(),
        "results": results,
    }
    record["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform()}
    (out / ("tiny.json" if size == "tiny" else "latest.json")).write_text(
        json.dumps(record, indent=2)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

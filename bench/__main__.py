"""`python -m bench`: run every benchmark, print a table, write bench/results/latest.json."""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

from bench import spine

SUITES = {"spine": spine.run}


def main(argv: list[str]) -> int:
    chosen = argv or list(SUITES)
    results: dict[str, dict[str, float]] = {}
    for name in chosen:
        results[name] = SUITES[name]()
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
    (out / "latest.json").write_text(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

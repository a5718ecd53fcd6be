"""Hostile frames per front door: how many per second each door refuses and keeps serving."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from server.testing.hostile import DOORS, feed

SIZES = {"tiny": 200, "full": 100_000}


def run(size: str) -> dict[str, float]:
    count = SIZES[size]
    figures: dict[str, float] = {}
    for door in DOORS:
        with tempfile.TemporaryDirectory() as home:
            started = time.perf_counter()
            outcome = asyncio.run(feed(door, 7, count, Path(home), deadline=3600))
            elapsed = time.perf_counter() - started
        if not outcome.answered or outcome.exit_code != 0:
            raise RuntimeError(f"{door} stopped serving after hostile frames: {outcome}")
        figures[f"{door}_frames"] = count
        figures[f"{door}_frames_per_s"] = count / elapsed
        figures[f"{door}_mb_sent"] = outcome.bytes_sent / 1e6
    return figures

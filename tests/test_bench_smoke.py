"""Every benchmark runs at tiny size, so none of them can rot."""

from __future__ import annotations

import pytest

from bench.__main__ import SUITES


@pytest.mark.parametrize("name", sorted(SUITES))
def test_benchmark_runs_at_tiny_size(name):
    figures = SUITES[name]("tiny")
    if name == "peer" and not figures:
        pytest.skip("no peer CLI installed")
    assert figures and all(isinstance(v, float | int) and v >= 0 for v in figures.values())

"""Every benchmark runs at tiny size, so none of them can rot."""

from __future__ import annotations

import pytest

from bench.__main__ import SUITES

# The local model takes seconds to load and 2 GB of memory: it runs with the slow tests.
SLOW = {
    "local": [pytest.mark.slow, pytest.mark.timeout(900)],
    "local-eval": [pytest.mark.slow, pytest.mark.timeout(1800)],
}
OPTIONAL = {
    "peer": "no peer CLI installed",
    "sandbox": "no sandbox can be made here (bubblewrap)",
    "local": "the local model is not installed",
    "local-eval": "the local model is not installed",
}


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=SLOW.get(name, [])) for name in sorted(SUITES)]
)
def test_benchmark_runs_at_tiny_size(name):
    figures = SUITES[name]("tiny")
    if name in OPTIONAL and not figures:
        pytest.skip(OPTIONAL[name])
    assert figures and all(isinstance(v, float | int) and v >= 0 for v in figures.values())

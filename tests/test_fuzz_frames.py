"""10,000 seeded hostile frames into each front door over real stdio, then one valid request:
it is answered and the process exits cleanly at end of input. `python -m bench fuzz` runs more."""

from __future__ import annotations

import pytest

from server.testing.hostile import feed

FRAMES = 10_000


@pytest.mark.parametrize("door", ["jsonrpc", "acp", "streamjson"])
async def test_ten_thousand_hostile_frames_then_a_valid_request(tmp_path, door):
    outcome = await feed(door, 19, FRAMES, tmp_path, deadline=300)
    assert outcome.answered, outcome
    assert outcome.exit_code == 0, outcome

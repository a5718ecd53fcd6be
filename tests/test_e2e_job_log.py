"""A background job's output on disk is capped (`limits.jobLogBytes`, 8 MB by default): a job
that prints without end keeps only its latest output, and bash_output says what was dropped."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeToolCall
from tests.trust_fixture import bash, clone, serve_turn

pytestmark = [
    pytest.mark.timeout(300),
]
CAP = 1_000_000


def job_logs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("agentls-jobs-*/bash_*.log"))


class Sampler:
    """The largest size seen of the job logs that appear while it runs (the server removes
    them when the session ends)."""

    def __init__(self) -> None:
        self.before, self.largest, self.seen = job_logs(), 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.02):
            for path in job_logs() - self.before:
                try:
                    size = path.stat().st_size
                except OSError:
                    continue
                self.seen += 1
                self.largest = max(self.largest, size)


async def test_a_background_jobs_log_stays_within_its_cap(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, user={"limits": {"jobLogBytes": CAP}})
    # 30 MB of output, then a last line; the job marks its end in the workspace.
    command = "head -c 30000000 /dev/zero | tr '\\\\0' x; echo; echo last-line; touch done.txt"
    start = FakeToolCall("bash", {"command": command, "run_in_background": True}, id="c1")
    wait = bash("for i in $(seq 1200); do [ -f done.txt ] && break; sleep 0.1; done; sleep 1", "c2")
    sizes = FakeToolCall("bash", {"command": "true"}, id="c3")
    output = FakeToolCall("bash_output", {"jobId": "bash_1"}, id="c4")
    sampler = Sampler()
    try:
        turn = await serve_turn(
            tmp_path, workspace, fake_llm, [start, wait, sizes, output],
            new={"mode": "bypassPermissions"},
        )
    finally:
        sampler.stop.set()
    assert turn.statuses() == ["completed"] * 4
    messages = fake_llm.requests[-1].body["messages"]
    [seen] = [m["content"] for m in messages if m.get("tool_call_id") == "c4"]
    assert '"status": "exited"' in seen  # the rest is cut at the result cap: the job's tail
    assert sampler.seen > 0, "the job's log was looked at while it ran"
    assert sampler.largest <= CAP + 65536, f"the log grew to {sampler.largest} bytes"

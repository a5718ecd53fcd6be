"""One resolution per decision: the real path a permission decision judges is the path the file
tool opens. A symlink flipping between a folder inside the workspace and one outside, while the
model reads through it many times over, must never hand the model the outside file unasked
(every permission request is rejected)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env
from tests.trust_fixture import clone

pytestmark = [
    pytest.mark.timeout(600),
]
OUTSIDE = "outside-secret-canary"
BATCHES, PER_BATCH = 8, 25


class Flipper:
    """Swaps `link` between two targets as fast as it can, atomically, until stopped."""

    def __init__(self, link, targets) -> None:
        self.link, self.targets = link, targets
        self.stop = threading.Event()
        self.flips = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        spare = self.link.with_name(self.link.name + ".next")
        while not self.stop.is_set():
            for target in self.targets:
                spare.unlink(missing_ok=True)
                os.symlink(target, spare)
                os.replace(spare, self.link)
                self.flips += 1


async def test_a_read_through_a_flipping_symlink_never_returns_the_outside_file_unasked(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm, user={"maxSteps": BATCHES + 5})
    inside, outside = workspace / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "notes.txt").write_text("inside notes")
    (outside / "notes.txt").write_text(OUTSIDE)
    link = workspace / "link"
    os.symlink(inside, link)
    batches = [
        Reply(
            tool_calls=[
                FakeToolCall("read_file", {"path": "link/notes.txt"}, id=f"c{b}_{i}")
                for i in range(PER_BATCH)
            ]
        )
        for b in range(BATCHES)
    ]
    fake_llm.script(*batches, Reply(text="done"))
    client = AgentClient()
    client.on_permission = lambda p: {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
    flipper = Flipper(link, [outside, inside])
    await client.start(server_env(tmp_path, OPENAI_API_KEY="k"))
    try:
        await client.initialize()
        session = await client.call("session/new", {"cwd": str(workspace)})
        flipper.thread.start()
        await client.call(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]},
        )
    finally:
        flipper.stop.set()
        await client.close()
    assert flipper.flips > 100, "the link flipped while the reads ran"
    results = [
        u["update"]
        for u in client.updates
        if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] != "in_progress"
    ]
    assert len(results) == BATCHES * PER_BATCH
    leaked = [r["toolCallId"] for r in results if OUTSIDE in json.dumps(r)]
    assert leaked == [], f"{len(leaked)} reads returned the outside file without a request"
    sent_back = json.dumps(fake_llm.requests[-1].body["messages"])
    assert OUTSIDE not in sent_back

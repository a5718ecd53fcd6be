"""Paths a client, a trace or a stored session names are resolved beneath their root and never
through a symlink: races that swap a folder for a link while agentls acts on it end with 0
escapes, through the real doors (`agentls serve`, `agentls acp`, `agentls replay`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import prompt, start

pytestmark = pytest.mark.timeout(600)
ROUNDS = 200


class Flipper:
    """Swaps `folder` between a real folder and a symlink to `outside`, as fast as it can, while
    `running` is set."""

    def __init__(self, folder: Path, outside: Path):
        self.folder, self.outside = folder, outside
        self.held = folder.with_name(folder.name + ".held")
        self.link = folder.with_name(folder.name + ".link")
        self.link.symlink_to(outside, target_is_directory=True)
        self.running = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            if not self.running.wait(0.05):
                continue
            try:
                os.rename(self.folder, self.held)
                os.rename(self.link, self.folder)
                os.rename(self.folder, self.link)
                os.rename(self.held, self.folder)
            except OSError:
                self.settle()

    def settle(self) -> None:
        """The real folder back in place, the link beside it."""
        if self.folder.is_symlink():
            os.rename(self.folder, self.link)
        if self.held.exists() and not self.folder.exists():
            os.rename(self.held, self.folder)

    @contextmanager
    def flipping(self) -> Iterator[None]:
        self.running.set()
        try:
            yield
        finally:
            self.running.clear()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


async def test_rewind_never_deletes_through_a_folder_swapped_for_a_link(
    tmp_path, workspace, fake_llm
):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "new.txt"
    sub = workspace / "sub"
    sub.mkdir()
    replies = []
    for n in range(ROUNDS):
        call = FakeToolCall("write_file", {"path": "sub/new.txt", "content": "mine"}, id=f"w{n}")
        replies += [Reply(tool_calls=[call]), Reply(text="written")]
    fake_llm.script(*replies)
    client = await start(tmp_path, workspace, fake_llm)
    flipper = Flipper(sub, outside)
    escapes = 0
    try:
        await client.initialize()
        new = {"cwd": str(workspace), "mode": "acceptEdits"}
        sid = (await client.call("session/new", new))["sessionId"]
        for _ in range(ROUNDS):
            victim.write_text("mine")
            result = await client.call("session/prompt", prompt(sid, "write it"))
            assert result["terminal"] == "completed", result
            with flipper.flipping():
                try:
                    await client.call(
                        "session/rewind", {"sessionId": sid, "turnId": result["turnId"]}
                    )
                except Exception:
                    pass  # refused: a conflict, or a link where a folder was
            flipper.running.clear()
            await_settled(flipper)
            escapes += not victim.exists()
            (sub / "new.txt").unlink(missing_ok=True)
    finally:
        flipper.close()
        flipper.settle()
        await client.close()
    assert escapes == 0, f"{escapes} of {ROUNDS} rewinds deleted the file outside"


def await_settled(flipper: Flipper) -> None:
    # the flipper finishes its current swap before it looks at `running` again
    for _ in range(1000):
        if flipper.folder.is_dir() and not flipper.folder.is_symlink():
            return
        threading.Event().wait(0.001)
    flipper.settle()

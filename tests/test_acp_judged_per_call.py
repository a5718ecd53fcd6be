"""Each call opens the path its own permission decision judged, even when calls on the same
path run at once and wait in between (an ACP editor answering `fs/read_text_file`): a symlink
flipping between a folder inside and one outside must never hand the model the outside file
unasked (every request is rejected)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest
from acp import schema

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_acp_frontend import Editor, agentls_acp, fake_env, text
from tests.test_e2e_judged_once import Flipper

pytestmark = [
    pytest.mark.timeout(600),
]
FS = schema.ClientCapabilities(fs=schema.FileSystemCapabilities(read_text_file=True))
OUTSIDE = "outside-secret-canary"
BATCHES, PER_BATCH = 12, 25


class SlowEditor(Editor):
    """An editor with no buffers, that answers each read after a moment (the tool then reads
    the disk)."""

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any):
        await asyncio.sleep(0.005)
        raise ValueError("no buffer")


async def test_concurrent_reads_each_open_what_their_own_decision_judged(
    tmp_path, workspace, fake_llm
):
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
                FakeToolCall("read_file", {"path": "link/notes.txt"}, id=f"r{b}_{i}")
                for i in range(PER_BATCH)
            ]
        )
        for b in range(BATCHES)
    ]
    fake_llm.script(*batches, Reply(text="done"))
    editor = SlowEditor()
    editor.on_permission = lambda r: schema.RequestPermissionResponse(
        outcome=schema.AllowedOutcome(outcome="selected", option_id="reject_once")
    )
    flipper = Flipper(link, [outside, inside])
    env = fake_env(tmp_path, fake_llm)
    try:
        async with agentls_acp(tmp_path, env, editor, caps=FS) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            flipper.thread.start()
            await conn.prompt(session_id=session.session_id, prompt=text("go"))
    finally:
        flipper.stop.set()
    sent_back = json.dumps([r.body["messages"] for r in fake_llm.requests])
    assert sent_back.count("inside notes") > 0, "some reads went through"
    assert OUTSIDE not in sent_back, "a read returned the outside file unasked"

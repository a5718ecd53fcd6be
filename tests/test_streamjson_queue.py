"""User messages sent one after another reach the model in the order they were sent: a message
is steered only into the turn running when it arrives, never ahead of one still queued."""

from __future__ import annotations

from server.testing.fake_llm import Reply
from tests.test_streamjson_flags import run, user


def test_three_queued_messages_keep_their_order(tmp_path, workspace, fake_llm):
    fake_llm.script(*[Reply(text=f"answer {n}") for n in range(1, 4)])
    frames, proc = run(
        tmp_path, workspace, fake_llm, lines=[user("one"), user("two"), user("three")]
    )
    assert proc.returncode == 0
    last = fake_llm.requests[-1].body["messages"]
    said = [
        m["content"]
        for m in last
        if m["role"] == "user" and m["content"] in ("one", "two", "three")
    ]
    assert said == ["one", "two", "three"]
    results = [f for f in frames if f["type"] == "result"]
    assert all(r["subtype"] == "success" for r in results)

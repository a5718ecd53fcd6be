"""A retried model call bills its failed attempts too: the turn's usage over `agentls serve`
adds what each failed attempt reported before it broke."""

from __future__ import annotations

import json

import pytest

from server.testing.fake_llm import Reply
from tests.test_e2e_interrupted import configure, prompt, start

FAILED = {
    # Anthropic reports the input tokens in message_start (and 1 output token) before the error.
    "anthropic": (Reply(text="half a", stream_error="Overloaded", usage=(100, 7)), 100, 1),
    # OpenRouter sends the finish chunk with its usage, then the error.
    "openai": (
        Reply(text="half a", stream_error="upstream broke", stop_reason="end_turn", usage=(100, 7)),
        100,
        7,
    ),
}


@pytest.mark.parametrize("wire", sorted(FAILED))
async def test_a_retried_call_counts_the_failed_attempts_usage(tmp_path, workspace, fake_llm, wire):
    configure(workspace, fake_llm, wire)
    config = json.loads((workspace / ".agentls" / "config.json").read_text())
    config["llm"]["maxRetries"] = 2
    (workspace / ".agentls" / "config.json").write_text(json.dumps(config))
    failed, failed_in, failed_out = FAILED[wire]
    fake_llm.script(failed, Reply(text="the answer", usage=(10, 5)))
    client = await start(tmp_path, wire)
    try:
        sid = (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        result = await client.call("session/prompt", prompt(sid))
    finally:
        await client.close()
    kinds = [u["update"]["kind"] for u in client.updates]
    assert "stream_retry" in kinds and result["terminal"] == "completed", kinds
    billed = {
        "inputTokens": failed_in + 10,
        "outputTokens": failed_out + 5,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
    }
    assert result["usage"] == billed
    [step] = [u["update"] for u in client.updates if u["update"]["kind"] == "step_finish"]
    assert step["usage"] == billed

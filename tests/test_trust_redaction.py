"""Secrets a provider echoes back in an error body (its key, an `Authorization` header, URL
credentials) are masked in the turn's error the client sees and in everything the store writes
(journal, trace, transcript). Real `agentls serve`, real SQLite file (issue 19, item 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.testing.fake_llm import Reply
from tests.agent_client import AgentClient, server_env
from tests.conftest import write_project_config

KEY = "sk-agentls-redact-0123456789abcdef"
BEARER = "bearer-token-abcdef0123456789"
PASSWORD = "url-password-0123456789"
BODY = (
    f"Incorrect API key provided: {KEY}; request had Authorization: Bearer {BEARER} "
    f"and went through https://gateway:{PASSWORD}@proxy.invalid/v1"
)
SECRETS = [KEY, BEARER, PASSWORD]
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1", "ollama": "llama3.2"}


def every_byte_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("provider", list(MODELS))
async def test_a_provider_error_body_is_redacted_in_the_turn_error_and_the_store(
    tmp_path, workspace, fake_llm, provider
):
    urls = {"anthropic": fake_llm.anthropic_base_url, "ollama": fake_llm.ollama_base_url}
    llm = {"provider": provider, "model": MODELS[provider], "maxRetries": 0}
    write_project_config(
        workspace, {"llm": {**llm, "baseUrl": urls.get(provider, fake_llm.openai_base_url)}}
    )
    fake_llm.script(Reply(status=400, error_message=BODY))
    client = AgentClient()
    await client.start(server_env(tmp_path, ANTHROPIC_API_KEY=KEY, OPENAI_API_KEY=KEY))
    try:
        await client.initialize()
        session = await client.call("session/new", {"cwd": str(workspace)})
        result = await client.call(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hi"}]},
        )
    finally:
        await client.close()
    assert result["terminal"] == "failed"
    assert "Incorrect API key provided: ***" in result["error"], result["error"]
    assert "https://***@proxy.invalid" in result["error"]
    assert not [s for s in SECRETS if s in result["error"]], result["error"]
    sent = json.dumps(client.updates)
    assert "Incorrect API key provided" in sent and not [s for s in SECRETS if s in sent]
    stored = every_byte_under(tmp_path / "data")
    assert b"Incorrect API key provided" in stored
    assert not [s for s in SECRETS if s.encode() in stored]

"""Two-step tool turns through `agentls serve` against the loopback fake, which refuses what
each real API refuses (`server.testing.fake_rules`): what agentls sends back must be what that
provider requires.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
import pytest_asyncio

from server.testing.fake_llm import FakeToolCall, Reply
from server.testing.fake_rules import signature
from tests.agent_client import AgentClient, server_env
from tests.test_e2e_providers import KEYS, PNG_B64, messages, open_session, prompt

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    agent = AgentClient()
    await agent.start(server_env(home, **KEYS))
    await agent.initialize()
    agent.user_config = home / "config" / "agentls" / "config.json"
    agent.user_config.parent.mkdir(parents=True)
    agent.log_file = home / "data" / "logs" / "serve.log"
    yield agent
    await agent.close()


def tool_step(thinking: str = "Let me check") -> tuple[Reply, Reply]:
    return (
        Reply(thinking=thinking, tool_calls=[FakeToolCall("list_dir", {})]),
        Reply(thinking="Empty dir", text="Nothing here."),
    )


def assistants(provider: str, body: dict) -> list[dict]:
    return [m for m in messages(provider, body) if m["role"] == "assistant"]


async def two_step(client, workspace, fake_llm, provider: str, model: str, **llm) -> dict:
    session_id = await open_session(client, workspace, fake_llm, provider, model=model, **llm)
    result, _ = await prompt(client, session_id, "what is here?")
    assert result["terminal"] == "completed", result.get("error")
    assert len(fake_llm.requests) == 2
    return fake_llm.requests[1].body


@pytest.mark.parametrize(
    ("provider", "model", "llm"),
    [
        ("deepseek", "deepseek-reasoner", {}),
        ("moonshot", "kimi-k2-thinking", {}),
        ("moonshot", "kimi-k2.5", {"providerOptions": {"temperature": 0.3}}),
    ],
)
async def test_reasoning_content_goes_back_with_tool_calls(
    client, workspace, fake_llm, provider, model, llm
) -> None:
    fake_llm.script(*tool_step())
    second = await two_step(client, workspace, fake_llm, provider, model, **llm)
    [assistant] = assistants(provider, second)
    assert assistant["reasoning_content"] == "Let me check"


async def test_openrouter_kimi_gets_its_signed_reasoning_details_back(
    client, workspace, fake_llm
) -> None:
    fake_llm.script(*tool_step())
    second = await two_step(
        client, workspace, fake_llm, "openrouter", "moonshotai/kimi-k2-thinking"
    )
    [assistant] = assistants("openrouter", second)
    [detail] = assistant["reasoning_details"]
    assert detail["type"] == "reasoning.text" and detail["text"] == "Let me check"
    assert detail["signature"] == signature("Let me check")
    assert "reasoning_content" not in assistant


async def test_openai_gets_no_reasoning_fields(client, workspace, fake_llm) -> None:
    fake_llm.script(*tool_step())
    second = await two_step(client, workspace, fake_llm, "openai", "gpt-4.1")
    [assistant] = assistants("openai", second)
    assert not {"reasoning_content", "reasoning_details"} & assistant.keys()


async def test_ollama_gets_its_thinking_back(client, workspace, fake_llm) -> None:
    fake_llm.script(*tool_step())
    second = await two_step(client, workspace, fake_llm, "ollama", "qwen3:8b")
    [assistant] = assistants("ollama", second)
    assert assistant["thinking"] == "Let me check"


@pytest.mark.parametrize("model", ["kimi-k2.5", "kimi-k2-thinking"])
async def test_moonshot_thinking_models_get_temperature_one(
    client, workspace, fake_llm, model
) -> None:
    fake_llm.script(*tool_step())
    second = await two_step(client, workspace, fake_llm, "moonshot", model)
    assert fake_llm.requests[0].body["temperature"] == second["temperature"] == 1


@pytest.mark.parametrize(
    ("model", "effort"),
    [
        ("claude-opus-4-6", "max"),
        ("claude-sonnet-4-6", "max"),
        ("claude-opus-4-7", "xhigh"),
    ],
)
async def test_ultrathink_effort_is_one_the_model_takes(
    client, workspace, fake_llm, model, effort
) -> None:
    fake_llm.script(*tool_step())
    session_id = await open_session(client, workspace, fake_llm, "anthropic", model=model)
    result, _ = await prompt(client, session_id, "what is here?", think="ultra")
    assert result["terminal"] == "completed", result.get("error")
    assert [r.body["output_config"] for r in fake_llm.requests] == [{"effort": effort}] * 2


REDACTED = {
    "type": "redacted_thinking",
    "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3",
}


async def test_redacted_thinking_goes_back_verbatim(client, workspace, fake_llm) -> None:
    fake_llm.script(
        Reply(
            blocks=[{"type": "thinking", "thinking": "Plan the listing"}, REDACTED],
            tool_calls=[FakeToolCall("list_dir", {})],
        ),
        Reply(blocks=[REDACTED, {"type": "text", "text": "It is empty."}]),
    )
    session_id = await open_session(
        client, workspace, fake_llm, "anthropic", model="claude-sonnet-4-5"
    )
    result, _ = await prompt(client, session_id, "what is here?", think="think")
    assert result["terminal"] == "completed", result.get("error")
    [assistant] = assistants("anthropic", fake_llm.requests[1].body)
    assert [b["type"] for b in assistant["content"]] == [
        "thinking",
        "redacted_thinking",
        "tool_use",
    ]
    assert assistant["content"][1] == REDACTED


async def test_adaptive_blocks_go_back_in_the_order_received(client, workspace, fake_llm) -> None:
    fake_llm.script(
        Reply(
            blocks=[
                {"type": "text", "text": "Let me look."},
                {"type": "thinking", "thinking": "The listing will tell."},
                {"type": "text", "text": "Listing now."},
            ],
            tool_calls=[FakeToolCall("list_dir", {})],
        ),
        Reply(text="It is empty."),
    )
    session_id = await open_session(
        client, workspace, fake_llm, "anthropic", model="claude-opus-4-6"
    )
    result, _ = await prompt(client, session_id, "what is here?", think="hard")
    assert result["terminal"] == "completed", result.get("error")
    [assistant] = assistants("anthropic", fake_llm.requests[1].body)
    content = [{k: v for k, v in b.items() if k != "cache_control"} for b in assistant["content"]]
    assert [b["type"] for b in content] == ["text", "thinking", "text", "tool_use"]
    assert content[0]["text"] == "Let me look." and content[2]["text"] == "Listing now."


async def test_haiku_4_5_thinks_with_a_budget(client, workspace, fake_llm) -> None:
    fake_llm.script(*tool_step())
    session_id = await open_session(
        client, workspace, fake_llm, "anthropic", model="claude-haiku-4-5-20251001"
    )
    result, _ = await prompt(client, session_id, "what is here?", think=True)
    assert result["terminal"] == "completed", result.get("error")
    first = fake_llm.requests[0].body
    assert first["thinking"]["type"] == "enabled"
    assert first["max_tokens"] > first["thinking"]["budget_tokens"]


async def test_thinking_a_model_cannot_do_is_said_on_stderr(client, workspace, fake_llm) -> None:
    fake_llm.script(Reply(text="plain answer"))
    session_id = await open_session(client, workspace, fake_llm, "deepseek", model="deepseek-chat")
    result, _ = await prompt(client, session_id, "think hard", think="hard")
    assert result["terminal"] == "completed", result.get("error")
    logged = client.log_file.read_text()
    assert "deepseek-chat cannot think on request" in logged


async def test_openrouter_error_shows_the_upstream_reason(client, workspace, fake_llm) -> None:
    raw = json.dumps({"error": {"message": "Rate limit reached for kimi-k2 on this key"}})
    metadata = {"raw": raw, "provider_name": "Moonshot AI"}
    refusal = Reply(status=429, error_message="Provider returned error", error_metadata=metadata)
    fake_llm.script(refusal, refusal, refusal)
    session_id = await open_session(
        client, workspace, fake_llm, "openrouter", model="moonshotai/kimi-k2", maxRetries=0
    )
    result, _ = await prompt(client, session_id, "hi")
    assert result["terminal"] == "failed"
    assert "Rate limit reached for kimi-k2 on this key" in result["error"]
    assert "Moonshot AI" in result["error"]


async def test_openrouter_error_after_length_is_a_max_tokens_stop(
    client, workspace, fake_llm
) -> None:
    fake_llm.script(
        Reply(
            text="A long answer that",
            stop_reason="length",
            stream_error="Provider returned error",
            usage=(30, 12),
        )
    )
    session_id = await open_session(
        client, workspace, fake_llm, "openrouter", model="moonshotai/kimi-k2"
    )
    result, _ = await prompt(client, session_id, "write a lot")
    assert result["terminal"] == "completed", result.get("error")
    assert result["stopReason"] == "max_tokens"
    assert result["usage"]["outputTokens"] == 12
    assert len(fake_llm.requests) == 1, "a finished reply is not retried"


async def test_ollama_tool_call_ids_are_unique_across_model_calls(
    client, workspace, fake_llm
) -> None:
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("list_dir", {})]),
        Reply(tool_calls=[FakeToolCall("list_dir", {})]),
        Reply(text="Done."),
    )
    session_id = await open_session(client, workspace, fake_llm, "ollama", model="llama3.2")
    result, updates = await prompt(client, session_id, "list twice")
    assert result["terminal"] == "completed", result.get("error")
    ids = [u["toolCallId"] for u in updates if u["kind"] == "tool_call"]
    assert len(ids) == 2 and len(set(ids)) == 2


async def test_image_then_text_keeps_the_users_order(client, workspace, fake_llm) -> None:
    fake_llm.script(Reply(text="A picture."))
    session_id = await open_session(client, workspace, fake_llm, "openai", model="gpt-4.1")
    image = {"type": "image", "mimeType": "image/png", "data": PNG_B64}
    params: dict[str, Any] = {
        "sessionId": session_id,
        "prompt": [image, {"type": "text", "text": "What is this?"}],
    }
    result = await client.call("session/prompt", params)
    assert result["terminal"] == "completed", result.get("error")
    [user] = [m for m in messages("openai", fake_llm.requests[0].body) if m["role"] == "user"][:1]
    assert [b["type"] for b in user["content"]] == ["image_url", "text"]


async def test_reasoning_models_leave_room_for_the_answer(client, workspace, fake_llm) -> None:
    fake_llm.script(Reply(text="ok"))
    session_id = await open_session(client, workspace, fake_llm, "openai", model="gpt-5")
    result, _ = await prompt(client, session_id, "hi")
    assert result["terminal"] == "completed", result.get("error")
    assert fake_llm.requests[0].body["max_completion_tokens"] >= 32_000


async def test_legacy_thinking_leaves_room_for_the_answer(client, workspace, fake_llm) -> None:
    fake_llm.script(*tool_step())
    session_id = await open_session(
        client, workspace, fake_llm, "anthropic", model="claude-sonnet-4-5"
    )
    result, _ = await prompt(client, session_id, "what is here?", think=True)
    assert result["terminal"] == "completed", result.get("error")
    first = fake_llm.requests[0].body
    assert first["max_tokens"] - first["thinking"]["budget_tokens"] >= 8192


async def test_dated_model_ids_are_priced(tmp_path, workspace, fake_llm) -> None:
    fake_llm.script(*tool_step())
    env = server_env(tmp_path, ANTHROPIC_API_KEY="key-anthropic", AGENTLS_LOG="debug")
    args = ["--provider", "anthropic", "--model", "claude-sonnet-4-20250514"]
    args += ["--base-url", fake_llm.anthropic_base_url, "--output-format", "stream-json"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        "-p",
        "what is here?",
        "--verbose",
        *args,
        cwd=workspace,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    frames = [json.loads(line) for line in out.decode().splitlines()]
    [result] = [f for f in frames if f["type"] == "result"]
    assert result["is_error"] is False, err.decode()
    assert len(fake_llm.requests) == 2
    # 2 x (10 input, 5 output) tokens at the sonnet 4.0 list price: $0.00021 (stream-json's
    # total_cost_usd is not filled in yet; the session's cost is logged when it closes)
    assert "(about $0.0002)" in err.decode()

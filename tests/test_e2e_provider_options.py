"""`llm.providerOptions` as users write it, over JSON-RPC against the loopback fake model: the
flat layout in agentls's names, the per-provider layout in each API's own spelling,
`llm.providers.<id>.defaults`, and a warning for keys no provider takes."""

from __future__ import annotations

from server.testing.fake_llm import Reply
from tests.agent_client import FAKE_MODELS, AgentClient, new_session, prompt, server_env
from tests.conftest import write_project_config


async def one_turn(tmp_path, workspace, fake_llm, provider, llm_extra):
    """One prompt with `llm_extra` added to the fake model's `llm` section: the request body
    the model got, and the server's log."""
    model, key_env, url = FAKE_MODELS[provider]
    llm = {"provider": provider, "model": model, "baseUrl": url(fake_llm), "maxRetries": 0}
    write_project_config(workspace, {"llm": {**llm, **llm_extra}})
    fake_llm.script(Reply(text="ok"))
    client = AgentClient()
    await client.start(server_env(tmp_path, **{key_env: "test-key"}))
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "hi"))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    [request] = fake_llm.requests
    return request.body, (tmp_path / "data" / "logs" / "serve.log").read_text()


async def test_the_per_provider_layout_in_the_apis_own_names(tmp_path, workspace, fake_llm):
    extra = {
        "providerOptions": {
            "openai": {"reasoning_effort": "high", "seed": 7},
            "anthropic": {"max_tokens": 999},
            "topP": 0.5,
        },
        "providers": {"openai": {"defaults": {"seed": 3, "stop": ["END"]}}},
    }
    body, _ = await one_turn(tmp_path, workspace, fake_llm, "openai", extra)
    assert body["reasoning_effort"] == "high"
    assert body["seed"] == 7 and body["stop"] == ["END"]
    assert "999" not in str(body), "another provider's options stay out"


async def test_a_flat_thinking_budget_reaches_anthropic_in_its_spelling(
    tmp_path, workspace, fake_llm
):
    extra = {"providerOptions": {"thinking": {"type": "enabled", "budgetTokens": 2048}}}
    body, _ = await one_turn(tmp_path, workspace, fake_llm, "anthropic", extra)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


async def test_keys_no_provider_takes_are_named_in_a_warning(tmp_path, workspace, fake_llm):
    extra = {"providerOptions": {"temprature": 0.2, "openai": {"frequency_penaltyy": 1}}}
    body, log = await one_turn(tmp_path, workspace, fake_llm, "openai", extra)
    assert "temprature" not in str(body)
    assert "temprature" in log and "frequency_penaltyy" in log and "providerOptions" in log

"""Provider selection: flag/config > model id > key present; presets; clear key errors."""

from __future__ import annotations

import asyncio

import pytest

from server import background
from server.providers import registry
from server.providers.registry import (
    ProviderConfigError,
    infer_provider,
    prefetch,
    resolve_settings,
    wire_of,
)

ALL_KEYS = {
    "ANTHROPIC_API_KEY": "ak",
    "OPENAI_API_KEY": "ok",
    "DEEPSEEK_API_KEY": "dk",
    "ARK_API_KEY": "vk",
    "DASHSCOPE_API_KEY": "qk",
    "MOONSHOT_API_KEY": "mk",
    "OPENROUTER_API_KEY": "rk",
}


@pytest.mark.parametrize(
    ("provider", "key", "base_url", "model"),
    [
        ("anthropic", "ak", None, "claude-sonnet-4-6"),
        ("openai", "ok", None, "gpt-5.5"),
        ("deepseek", "dk", "https://api.deepseek.com/v1", "deepseek-chat"),
        ("volcengine", "vk", "https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6-250615"),
        ("qwen", "qk", "https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus"),
        ("moonshot", "mk", "https://api.moonshot.cn/v1", "kimi-k2-0905-preview"),
        ("openrouter", "rk", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.6"),
        ("ollama", None, "http://127.0.0.1:11434", "llama3.2"),
    ],
)
def test_presets(provider, key, base_url, model) -> None:
    settings = resolve_settings({"provider": provider}, ALL_KEYS)
    assert (settings.provider, settings.api_key, settings.base_url, settings.model) == (
        provider,
        key,
        base_url,
        model,
    )


@pytest.mark.parametrize(
    ("alias", "provider"),
    [("kimi", "moonshot"), ("dashscope", "qwen"), ("doubao", "volcengine"), ("ark", "volcengine")],
)
def test_aliases(alias: str, provider: str) -> None:
    assert resolve_settings({"provider": alias}, ALL_KEYS).provider == provider


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("claude-opus-4-6", "anthropic"),
        ("gpt-5.5", "openai"),
        ("o3-mini", "openai"),
        ("codex-mini", "openai"),
        ("deepseek-reasoner", "deepseek"),
        ("doubao-seed-1-6-250615", "volcengine"),
        ("qwen-plus", "qwen"),
        ("qwq-32b", "qwen"),
        ("kimi-k2-0905-preview", "moonshot"),
        ("moonshot-v1-32k", "moonshot"),
        ("llama3.2:3b", "ollama"),
        ("deepseek-r1:8b", "ollama"),
        ("mistral-large", None),
        (None, None),
    ],
)
def test_inference_from_model_id(model, provider) -> None:
    assert infer_provider(model, {}) == provider


def test_vendor_prefixed_ids_go_to_openrouter_when_its_key_is_set() -> None:
    assert infer_provider("anthropic/claude-opus-4.6", {"OPENROUTER_API_KEY": "k"}) == "openrouter"
    assert infer_provider("anthropic/claude-opus-4.6", {}) == "anthropic"


def test_precedence_config_then_model_then_keys() -> None:
    keys = {"OPENAI_API_KEY": "ok", "DEEPSEEK_API_KEY": "dk"}
    assert resolve_settings({"provider": "openai", "model": "deepseek-chat"}, keys).provider == (
        "openai"
    )
    assert resolve_settings({"model": "deepseek-chat"}, keys).provider == "deepseek"
    assert resolve_settings({}, keys).provider == "openai"
    assert resolve_settings({}, {"DEEPSEEK_API_KEY": "dk"}).provider == "deepseek"


@pytest.mark.parametrize(
    ("llm", "variable"),
    [
        ({"provider": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"provider": "deepseek"}, "DEEPSEEK_API_KEY"),
        ({"model": "qwen-max"}, "DASHSCOPE_API_KEY"),
        ({"provider": "kimi"}, "MOONSHOT_API_KEY"),
        ({"provider": "volcengine"}, "ARK_API_KEY"),
        ({"provider": "openrouter"}, "OPENROUTER_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(llm, variable) -> None:
    with pytest.raises(ProviderConfigError, match=variable):
        resolve_settings(llm, {})


def test_nothing_configured_says_how_to_fix_it() -> None:
    with pytest.raises(ProviderConfigError) as info:
        resolve_settings({}, {})
    assert "ANTHROPIC_API_KEY" in str(info.value) and "--provider" in str(info.value)


def test_unknown_provider() -> None:
    with pytest.raises(ProviderConfigError, match="unknown provider 'nonesuch'"):
        resolve_settings({"provider": "nonesuch"}, ALL_KEYS)


def test_base_url_precedence_and_local_servers() -> None:
    env = {"DEEPSEEK_API_KEY": "dk", "DEEPSEEK_BASE_URL": "http://proxy/v1"}
    assert resolve_settings({"provider": "deepseek"}, env).base_url == "http://proxy/v1"
    configured = {"provider": "deepseek", "baseUrl": "http://mine/v1"}
    assert resolve_settings(configured, env).base_url == "http://mine/v1"
    ollama = resolve_settings({"provider": "ollama"}, {"OLLAMA_HOST": "10.0.0.2:11434"})
    assert ollama.base_url == "http://10.0.0.2:11434" and ollama.api_key is None
    local = resolve_settings({"provider": "openai", "baseUrl": "http://127.0.0.1:8000/v1"}, {})
    assert local.api_key is None


def test_retries_and_timeout_come_from_config() -> None:
    settings = resolve_settings({"provider": "openai", "maxRetries": 5, "timeout": 30}, ALL_KEYS)
    assert (settings.max_retries, settings.timeout) == (5, 30.0)


@pytest.mark.parametrize(
    ("provider", "wire"),
    [("anthropic", "anthropic"), ("deepseek", "openai"), ("kimi", "openai"), ("ollama", "ollama")],
)
def test_wire_of(provider: str, wire: str) -> None:
    assert wire_of(provider) == wire


def test_a_prefetch_runs_its_then_on_the_loop_once_the_sdk_is_in() -> None:
    async def ran() -> list[str]:
        loop = asyncio.get_running_loop()
        seen: list[str] = []
        settings = resolve_settings(
            {"provider": "openai", "model": "gpt-5.5"}, {"OPENAI_API_KEY": "k"}
        )
        prefetch(
            settings,
            then=lambda: seen.append("loop" if asyncio.get_running_loop() is loop else "?"),
        )
        deadline = loop.time() + 60
        while not seen and loop.time() < deadline:
            await asyncio.sleep(0.01)
        return seen

    assert asyncio.run(ran()) == ["loop"]


def test_a_prefetch_whose_sdk_fails_to_import_runs_nothing_after_it(monkeypatch) -> None:
    """A broken SDK: the first model call imports it again and reports why; nothing is built
    on the loop in between (it would wait there for every other queued import)."""
    monkeypatch.setitem(registry.SDK_MODULES, "openai", "agentls_no_such_sdk")
    seen: list[str] = []

    async def ran() -> None:
        settings = resolve_settings(
            {"provider": "openai", "model": "gpt-5.5"}, {"OPENAI_API_KEY": "k"}
        )
        prefetch(settings, then=lambda: seen.append("built"))
        background.ready("agentls_no_such_sdk")
        for _ in range(3):
            await asyncio.sleep(0)

    asyncio.run(ran())
    assert seen == []

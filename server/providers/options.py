"""Provider options: `merge(defaults(provider), infer(model_id), overrides...)`.

Options use our own names (`maxTokens`, `temperature`, `topP`, `reasoning.effort`, `thinking`,
`output_config`, `stop`, ...); each provider maps them to its wire at its boundary and drops what
its API does not take. Merging: dict values merge recursively, lists and scalars replace, an
explicit None deletes the key. Overrides come from `llm.providerOptions` in the config, then
from the active skills (`SKILL_STATE_KEY` in the tool context state), then per-call thinking.
Inference never turns thinking on.
"""

from __future__ import annotations

import re
from typing import Any

from server.providers.catalog import describe, fixed_temperature, normalize, reasons

SKILL_STATE_KEY = "providerOptions"
"""Tool-context state key where active skills deep-merge their `providerOptions`."""

ANTHROPIC_DEFAULTS: dict[str, Any] = {"maxTokens": 8192, "temperature": 1.0}
OPENAI_DEFAULTS: dict[str, Any] = {"maxTokens": 4096, "temperature": 0.7}
REASONING_MAX_TOKENS = 32_768
"""Models that think on their own get this much output (or their cap), reasoning included."""

_REASONING_SERIES = re.compile(r"^o[134](?![0-9a-z])")


def merge(*layers: dict[str, Any] | None) -> dict[str, Any]:
    """Deep-merge left to right into a new dict; None values delete, never survive."""
    out: dict[str, Any] = {}
    for layer in layers:
        out = _merge_two(out, layer or {})
    return out


def _merge_two(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            current = out.get(key)
            out[key] = _merge_two(current if isinstance(current, dict) else {}, value)
        else:
            out[key] = value
    return out


def defaults(provider: str) -> dict[str, Any]:
    """Anthropic and the OpenAI-style providers differ; the scripted model takes none."""
    if provider == "anthropic":
        return dict(ANTHROPIC_DEFAULTS)
    if provider == "scripted":
        return {}
    return dict(OPENAI_DEFAULTS)


def infer(model_id: str) -> dict[str, Any]:
    """What the model id alone implies (a layer: its None values delete defaults)."""
    model = normalize(model_id or "")
    out: dict[str, Any] = {}
    if _REASONING_SERIES.match(model):
        out.update(temperature=None, reasoning={"effort": "medium"})
    if "opus-4" in model:
        out["maxTokens"] = 16384
    if "haiku" in model:
        out["maxTokens"] = 4096
    if reasons(model_id or ""):  # their output cap counts the reasoning too
        out["maxTokens"] = min(describe(model_id).max_output, REASONING_MAX_TOKENS)
    if (temperature := fixed_temperature(model_id or "")) is not None:
        out["temperature"] = temperature
    return out


def resolve(provider: str, model_id: str, *overrides: dict[str, Any] | None) -> dict[str, Any]:
    return merge(defaults(provider), infer(model_id), *overrides)

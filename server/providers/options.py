"""Provider options: `merge(defaults(provider), infer(model_id), overrides...)`.

Options use our own names (`maxTokens`, `temperature`, `topP`, `reasoning.effort`, `thinking`,
`output_config`, `stop`, ...); each provider maps them to its wire at its boundary and drops what
its API does not take. Merging: dict values merge recursively, lists and scalars replace, an
explicit None deletes the key. Overrides come from `llm.providerOptions` in the config, then
from the active skills (`SKILL_STATE_KEY` in the tool context state), then per-call thinking.
Inference never turns thinking on.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from typing import Any

from server.logs import warn_once
from server.providers import thinking
from server.providers.catalog import describe, fixed_temperature, normalize, reasons

log = logging.getLogger(__name__)

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
    merged = merge(defaults(provider), infer(model_id), *overrides)
    return thinking.room_for_answer(model_id, merged)


# -- the config's layouts ----------------------------------------------------------------------

WIRE_NAMES = {
    "max_tokens": "maxTokens",
    "max_completion_tokens": "maxTokens",
    "max_output_tokens": "maxTokens",
    "num_predict": "maxTokens",
    "top_p": "topP",
    "reasoning_effort": "reasoningEffort",
    "stop_sequences": "stop",
    "extra_body": "extraBody",
    "num_ctx": "numCtx",
    "outputConfig": "output_config",
}
"""Option names as the APIs spell them -> ours."""
THINKING_NAMES = {"budgetTokens": "budget_tokens"}
"""`thinking` goes to Anthropic as it is: our camelCase spelling of its keys -> its own."""

TAKEN: dict[str, frozenset[str]] = {
    "anthropic": frozenset({"maxTokens", "thinking", "output_config", "stop"}),
    "openai": frozenset(
        {"maxTokens", "temperature", "topP", "stop", "seed", "reasoning", "reasoningEffort"}
        | {"extraBody"}
    ),
    "ollama": frozenset({"maxTokens", "temperature", "topP", "stop", "seed", "numCtx"}),
    "local": frozenset(
        {"maxTokens", "temperature", "topP", "seed", "promptCache", "contextWindow", "threads"}
        | {"tools", "resultChars", "exampleSteps"}
    ),
}
"""The options each wire sends (or, for the local model, uses); the rest reach no provider."""


def configured(
    llm: dict[str, Any],
    provider: str,
    wire: str,
    provider_ids: Collection[str],
    *,
    named: str = "llm.providerOptions",
) -> dict[str, Any]:
    """The config's options for `provider`, in our names: `llm.providers.<id>.defaults`, then
    the flat keys of `llm.providerOptions`, then its `<id>` section (each API's own spelling is
    accepted). Keys the provider's wire does not take are named in a warning, once, as keys of
    `named` (a prompt's options have this layout too)."""
    raw = llm.get("providerOptions") or {}
    flat = {k: v for k, v in raw.items() if not (k in provider_ids and isinstance(v, dict))}
    own = raw.get(provider) if isinstance(raw.get(provider), dict) else None
    section = (llm.get("providers") or {}).get(provider)
    base = section.get("defaults") if isinstance(section, dict) else None
    layers = [_our_names(layer) for layer in (base, flat, own) if isinstance(layer, dict)]
    merged = merge(*layers)
    taken = TAKEN.get(wire)
    if taken is not None:
        for key in sorted(set(merged) - taken):
            warn_once(
                log,
                (named, wire, key),
                "%s: %r reaches no %s model and is ignored; %s takes: %s",
                named,
                key,
                provider,
                wire,
                ", ".join(sorted(taken)),
            )
    return merged


def _our_names(layer: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in layer.items():
        ours = WIRE_NAMES.get(key, key)
        if ours == "thinking" and isinstance(value, dict):
            value = {THINKING_NAMES.get(k, k): v for k, v in value.items()}
        out[ours] = value
    return out

"""The model catalogue: lookups by id in any spelling, safe defaults, vision defaults, cost."""

from __future__ import annotations

import logging

import pytest

from server.providers import catalog
from server.providers.catalog import describe, lookup, models_for
from server.providers.messages import Usage


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("claude-opus-4-6", "claude-opus-4-6"),
        ("claude-opus-4.6", "claude-opus-4-6"),
        ("anthropic/claude-opus-4.6", "claude-opus-4-6"),
        ("Claude-Sonnet-4-6", "claude-sonnet-4-6"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("gpt-5-5", "gpt-5.5"),
        ("openai/gpt-4.1", "gpt-4.1"),
        ("llava:13b", "llava"),
        ("deepseek/deepseek-chat", "deepseek-chat"),
    ],
)
def test_lookup_accepts_every_spelling(spelling: str, expected: str) -> None:
    entry = lookup(spelling)
    assert entry is not None and entry.id == expected


def test_lookup_misses() -> None:
    assert lookup("claude-sonnet-4-5-preview") is None
    assert lookup("nonesuch") is None
    assert lookup("") is None


def test_known_entry_fields() -> None:
    entry = describe("claude-opus-4-6")
    assert (entry.provider, entry.context_window, entry.max_output) == (
        "anthropic",
        200_000,
        64_000,
    )
    assert entry.vision and entry.known and entry.thinking == "adaptive"
    assert describe("claude-sonnet-4-5").thinking == "legacy"
    assert describe("claude-haiku-4-5").thinking == "legacy"
    assert describe("deepseek-chat").vision is False
    assert describe("o3-mini").vision is False


def test_unknown_models_get_safe_defaults_and_a_debug_note(caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="server.providers.catalog"):
        first = describe("acme-coder-9000", "openai")
        describe("acme-coder-9000", "openai")
    notes = [r for r in caplog.records if "acme-coder-9000" in r.getMessage()]

    assert len(notes) == 1
    assert (first.id, first.provider, first.known) == ("acme-coder-9000", "openai", False)
    assert (first.context_window, first.max_output, first.vision) == (128_000, 4_096, False)
    assert first.price is None and first.thinking == "none"
    claude = describe("claude-sonnet-9")
    assert (claude.context_window, claude.vision, claude.known) == (200_000, True, False)


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("anthropic", "claude-sonnet-4-6"),
        ("openai", "gpt-5.5"),
        ("qwen", "qwen-vl-max"),
        ("moonshot", "moonshot-v1-32k-vision-preview"),
        ("volcengine", "doubao-seed-1-6-vision-250815"),
        ("openrouter", "anthropic/claude-sonnet-4.6"),
        ("ollama", "llava"),
        ("deepseek", None),
        ("scripted", None),
    ],
)
def test_vision_defaults_can_see(provider: str, model: str | None) -> None:
    assert catalog.vision_default(provider) == model
    if model:
        assert describe(model).vision


def test_cost_from_list_prices() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=2_000_000,
        cache_write_tokens=400_000,
    )
    # sonnet: $3 in, $15 out, cache reads at 10 %, cache writes at 125 % of input
    assert catalog.cost_usd("claude-sonnet-4-6", usage) == pytest.approx(3 + 1.5 + 0.6 + 1.5)
    assert catalog.cost_usd("unknown-model", usage) == 0.0
    assert catalog.cost_usd("gpt-5.5", usage) == 0.0


def test_models_for_pickers() -> None:
    anthropic = [m.model_id for m in models_for("anthropic")]
    assert "claude-sonnet-4-6" in anthropic and all(m.startswith("claude") for m in anthropic)
    ollama = models_for("ollama", current="qwen3:8b")
    assert ollama[0].model_id == "qwen3:8b" and ollama[0].provider == "ollama"
    assert models_for("ollama", current="llava")[0].model_id == "llama3.2"
    everything = models_for(None)
    assert len(everything) == len(catalog.CATALOG)
    info = next(m for m in everything if m.model_id == "deepseek-chat")
    assert (info.provider, info.context_window, info.vision) == ("deepseek", 128_000, False)

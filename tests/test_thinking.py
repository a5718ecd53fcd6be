"""Thinking: families by model id, levels, budgets, flags, and the fields a request gets."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from server.engines.native import NativeEngine
from server.providers import thinking
from server.providers.thinking import ThinkingRequest, choose, family, parse_budget
from server.turn import SessionSpec


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-opus-4-6", "adaptive"),
        ("claude-opus-4.7", "adaptive"),
        ("claude-opus-4-8", "adaptive"),
        ("anthropic/claude-opus-4.6", "adaptive"),
        ("Claude-Sonnet-4.6", "adaptive"),
        ("claude-sonnet-4-7-20270101", "adaptive"),
        ("claude-opus-5", "adaptive"),
        ("claude-sonnet-4-5", "legacy"),
        ("claude-sonnet-4-5-20250929", "legacy"),
        ("claude-sonnet-4-20250514", "legacy"),
        ("claude-sonnet-4-0", "legacy"),
        ("claude-opus-4-20250514", "legacy"),
        ("claude-opus-4-1", "legacy"),
        ("anthropic/claude-opus-4.5", "legacy"),
        ("claude-3-7-sonnet-latest", "legacy"),
        ("claude-3-5-sonnet-20241022", "legacy"),
        ("claude-3-opus-20240229", "legacy"),
        ("claude-haiku-4-5", "legacy"),
        ("claude-3-5-haiku-20241022", "none"),
        ("gpt-5.5", "none"),
        ("deepseek-reasoner", "none"),
        ("claude-next", "none"),
        ("", "none"),
    ],
)
def test_family(model: str, expected: str) -> None:
    assert family(model) == expected


@pytest.mark.parametrize(
    ("level", "effort"), [("think", "medium"), ("hard", "high"), ("ultra", "xhigh"), (True, "high")]
)
def test_adaptive_effort(level, effort) -> None:
    fields = thinking.options(
        "anthropic", "claude-opus-4-7", ThinkingRequest(level, budget=5000), max_tokens=16384
    )
    assert fields == {
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": effort},
        "temperature": None,
        "topP": None,
    }


@pytest.mark.parametrize(
    ("model", "budget", "max_tokens", "expected", "total"),
    [
        ("claude-sonnet-4-5", None, 16384, 8000, 16384),
        ("claude-sonnet-4-5", None, 32000, 8000, 32000),
        ("claude-sonnet-4-5", 3000, 8192, 3000, 11192),
        ("claude-sonnet-4-5", 20000, 8192, 20000, 28192),
        ("claude-sonnet-4-5", None, None, 8000, 16192),
        ("claude-sonnet-4-5", 100000, 8192, 64000 - 8192, 64000),
        ("claude-opus-4-1", 30000, 16384, 32000 - 8192, 32000),
        ("claude-3-opus-20240229", None, 4096, 1024, 8192),
    ],
)
def test_legacy_budget_leaves_room_for_the_answer(
    model, budget, max_tokens, expected, total
) -> None:
    fields = thinking.options(
        "anthropic", model, ThinkingRequest("hard", budget), max_tokens=max_tokens
    )
    assert fields == {
        "thinking": {"type": "enabled", "budget_tokens": expected},
        "maxTokens": total,
        "temperature": None,
        "topP": None,
    }


@pytest.mark.parametrize(
    ("model", "level", "effort"),
    [("o3", "think", "medium"), ("gpt-5", "hard", "high"), ("o4-mini", True, "high")],
)
def test_openai_reasoning_models_take_an_effort(model, level, effort) -> None:
    fields = thinking.options("openai", model, ThinkingRequest(level), max_tokens=4096)
    assert fields == {"reasoning": {"effort": effort}}


@pytest.mark.parametrize(
    ("wire", "model", "request_"),
    [
        ("anthropic", "claude-3-5-haiku-20241022", ThinkingRequest("ultra")),
        ("anthropic", "some-unknown-model", ThinkingRequest(True)),
        ("openai", "anthropic/claude-opus-4.6", ThinkingRequest("hard")),
        ("ollama", "qwen3:8b", ThinkingRequest(True)),
        ("anthropic", "claude-opus-4-6", ThinkingRequest()),
        ("anthropic", "claude-opus-4-6", ThinkingRequest(False)),
    ],
)
def test_nothing_for_other_models_or_when_off(wire, model, request_) -> None:
    assert thinking.options(wire, model, request_, max_tokens=8192) == {}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5000, 5000),
        ("5000", 5000),
        (4096.9, 4096),
        ("1e4", 10000),
        (1, 1),
        (0.5, None),
        (0, None),
        (-3, None),
        ("abc", None),
        ("", None),
        ("nan", None),
        ("inf", None),
        (True, None),
        (None, None),
        ([5], None),
    ],
)
def test_parse_budget(value, expected) -> None:
    assert parse_budget(value) == expected


@pytest.mark.parametrize(
    ("think", "budget", "llm", "expected"),
    [
        (None, None, {}, ThinkingRequest()),
        ("hard", None, {}, ThinkingRequest("hard")),
        (True, None, {"thinkingBudget": 3000}, ThinkingRequest(True, 3000)),
        (None, None, {"think": "ultra"}, ThinkingRequest("ultra")),
        ("think", None, {"think": "ultra"}, ThinkingRequest("think")),
        (None, 2048, {}, ThinkingRequest(True, 2048)),
        (None, None, {"thinkingBudget": "4000"}, ThinkingRequest(True, 4000)),
        (False, 4000, {"think": "hard", "thinkingBudget": 3000}, ThinkingRequest()),
        (None, -5, {"think": "hard"}, ThinkingRequest("hard")),
        (None, None, {"think": "bogus"}, ThinkingRequest()),
        ("HARD", None, {}, ThinkingRequest("hard")),
    ],
)
def test_prompt_options_win_over_config(think, budget, llm, expected) -> None:
    assert choose(think, budget, llm) == expected


def parse(*argv: str) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", nargs="?")
    thinking.add_thinking_flags(parser)
    return thinking.thinking_flags(parser.parse_args(argv))


def test_flags() -> None:
    assert parse("serve") == {}
    assert parse("serve", "--think") == {"llm": {"think": True}}
    assert parse("serve", "--think", "hard") == {"llm": {"think": "hard"}}
    assert parse("serve", "--think=think") == {"llm": {"think": "think"}}
    assert parse("serve", "--ultrathink") == {"llm": {"think": "ultra"}}
    assert parse("serve", "--think", "think", "--ultrathink") == {"llm": {"think": "ultra"}}
    assert parse("serve", "--thinking-budget", "4096.7") == {"llm": {"thinkingBudget": 4096}}
    assert parse("serve", "--thinking-budget", "lots") == {}
    assert parse("serve", "--thinking-budget=-1", "--think") == {"llm": {"think": True}}


def test_unknown_level_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit):
        parse("serve", "--think", "deep")
    assert "invalid choice" in capsys.readouterr().err


async def session(tmp_path: Path, model: str, **llm):
    engine = NativeEngine(tools=lambda: [], environ={"ANTHROPIC_API_KEY": "k"})
    config = {"llm": {"provider": "anthropic", "model": model, **llm}}
    return await engine.create_session(SessionSpec("s", tmp_path, config))


async def test_thinking_removes_temperature_from_the_merged_options(tmp_path: Path) -> None:
    handle = await session(
        tmp_path, "claude-sonnet-4-5", providerOptions={"temperature": 0.3, "maxTokens": 6000}
    )
    handle.think = choose("hard", None, handle.llm)

    assert handle.call_options() == {
        "maxTokens": 8000 + 8192,
        "thinking": {"type": "enabled", "budget_tokens": 8000},
    }
    assert handle.call_options(thinking_on=False) == {"maxTokens": 6000, "temperature": 0.3}


async def test_adaptive_model_through_the_session(tmp_path: Path) -> None:
    handle = await session(tmp_path, "claude-opus-4.7")
    handle.think = choose(True, None, handle.llm)

    assert handle.call_options() == {
        "maxTokens": 16384,
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "high"},
    }

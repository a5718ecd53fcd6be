"""Provider options: the three-layer merge, the defaults, what model ids imply, who feeds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.engines.native import NativeEngine
from server.providers import options
from server.providers.options import merge, resolve
from server.turn import SessionSpec


def test_dicts_merge_recursively() -> None:
    base = {"reasoning": {"effort": "low", "summary": "auto"}, "maxTokens": 10}
    override = {"reasoning": {"effort": "high"}}

    assert merge(base, override) == {
        "reasoning": {"effort": "high", "summary": "auto"},
        "maxTokens": 10,
    }


def test_lists_and_scalars_replace() -> None:
    assert merge({"stop": ["a", "b"], "temperature": 1.0}, {"stop": ["c"], "temperature": 0}) == {
        "stop": ["c"],
        "temperature": 0,
    }
    assert merge({"reasoning": {"effort": "low"}}, {"reasoning": "off"}) == {"reasoning": "off"}
    assert merge({"stop": "x"}, {"stop": {"a": 1}}) == {"stop": {"a": 1}}


def test_none_deletes_at_any_depth_and_never_survives() -> None:
    base = {"temperature": 0.7, "reasoning": {"effort": "low", "summary": "auto"}}

    assert merge(base, {"temperature": None, "reasoning": {"summary": None}}) == {
        "reasoning": {"effort": "low"}
    }
    assert merge({}, {"missing": None, "extra": {"a": None, "b": 1}}) == {"extra": {"b": 1}}


def test_merge_leaves_its_inputs_alone() -> None:
    base = {"reasoning": {"effort": "low"}}
    override = {"reasoning": {"effort": None}}
    merge(base, override)

    assert base == {"reasoning": {"effort": "low"}}
    assert override == {"reasoning": {"effort": None}}
    assert merge() == {} and merge(None, {}) == {}


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("anthropic", {"maxTokens": 8192, "temperature": 1.0}),
        ("openai", {"maxTokens": 4096, "temperature": 0.7}),
        ("deepseek", {"maxTokens": 4096, "temperature": 0.7}),
        ("openrouter", {"maxTokens": 4096, "temperature": 0.7}),
        ("ollama", {"maxTokens": 4096, "temperature": 0.7}),
        ("scripted", {}),
    ],
)
def test_defaults(provider: str, expected: dict) -> None:
    assert options.defaults(provider) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("o1", {"temperature": None, "reasoning": {"effort": "medium"}}),
        ("o3-mini", {"temperature": None, "reasoning": {"effort": "medium"}, "maxTokens": 32768}),
        (
            "openai/o4-mini",
            {"temperature": None, "reasoning": {"effort": "medium"}, "maxTokens": 32768},
        ),
        ("O3", {"temperature": None, "reasoning": {"effort": "medium"}, "maxTokens": 32768}),
        ("gpt-5", {"maxTokens": 32768}),
        ("kimi-k2.5", {"maxTokens": 32768, "temperature": 1.0}),
        ("gpt-4o", {}),
        ("o5", {}),
        ("claude-opus-4-6", {"maxTokens": 16384}),
        ("anthropic/claude-opus-4.1", {"maxTokens": 16384}),
        ("claude-opus-4-20250514", {"maxTokens": 16384}),
        ("claude-3-opus-20240229", {}),
        ("claude-haiku-4-5", {"maxTokens": 4096}),
        ("claude-3-5-haiku-latest", {"maxTokens": 4096}),
        ("deepseek-reasoner", {"maxTokens": 32768}),
        ("deepseek-chat", {}),
        ("claude-sonnet-4-6", {}),
        ("", {}),
    ],
)
def test_inference(model: str, expected: dict) -> None:
    assert options.infer(model) == expected


@pytest.mark.parametrize(
    "model", ["claude-opus-4-6", "claude-sonnet-4-5", "o3", "deepseek-reasoner", "claude-3-opus"]
)
def test_inference_never_turns_thinking_on(model: str) -> None:
    inferred = options.infer(model)
    assert "thinking" not in inferred and "output_config" not in inferred


def test_three_layers() -> None:
    assert resolve("anthropic", "claude-opus-4-6", {"temperature": 0.2}) == {
        "maxTokens": 16384,
        "temperature": 0.2,
    }
    assert resolve("openai", "o3", {"reasoning": {"effort": "high"}}) == {
        "maxTokens": 32768,
        "reasoning": {"effort": "high"},
    }
    assert resolve("openai", "o3", {"temperature": 0.5}, {"maxTokens": None}) == {
        "temperature": 0.5,
        "reasoning": {"effort": "medium"},
    }
    assert resolve("deepseek", "deepseek-reasoner") == {"maxTokens": 32768, "temperature": 0.7}


async def session(tmp_path: Path, llm: dict):
    engine = NativeEngine(
        tools=lambda: [], environ={"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    )
    spec = SessionSpec(session_id="s", cwd=tmp_path, config={"llm": llm})
    return await engine.create_session(spec)


async def test_config_then_skills_feed_the_override_layer(tmp_path: Path) -> None:
    handle = await session(
        tmp_path,
        {
            "provider": "anthropic",
            "model": "claude-haiku-4-5",
            "providerOptions": {"maxTokens": 2000, "stop": ["END"], "topP": 0.9},
        },
    )
    assert handle.call_options() == {
        "maxTokens": 2000,
        "temperature": 1.0,
        "stop": ["END"],
        "topP": 0.9,
    }
    handle.tool_ctx.state[options.SKILL_STATE_KEY] = {"maxTokens": 3000, "topP": None}

    assert handle.call_options() == {"maxTokens": 3000, "temperature": 1.0, "stop": ["END"]}

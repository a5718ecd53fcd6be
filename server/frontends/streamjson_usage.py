"""Per-model token totals for stream-json `result` frames (`modelUsage`), kept for the whole
process as Claude Code keeps them: each result carries the running total so far."""

from __future__ import annotations

import os
from typing import Any

from protocol.updates import Usage
from server.providers import catalog
from server.providers.messages import Usage as CallUsage


class ModelUsageTotals:
    def __init__(self) -> None:
        self._totals: dict[str, Usage] = {}
        self._turn: Usage = Usage()

    def add(self, model: str, usage: Usage) -> None:
        """One model call of the running turn."""
        self._totals[model] = _sum(self._totals.get(model, Usage()), usage)
        self._turn = _sum(self._turn, usage)

    def close_turn(self, model: str, usage: Usage) -> None:
        """The turn's own total: what its calls did not report one by one (a subagent's calls)
        goes to the model the turn ended on."""
        rest = Usage(
            input_tokens=max(0, usage.input_tokens - self._turn.input_tokens),
            output_tokens=max(0, usage.output_tokens - self._turn.output_tokens),
            cache_read_tokens=max(0, usage.cache_read_tokens - self._turn.cache_read_tokens),
            cache_write_tokens=max(0, usage.cache_write_tokens - self._turn.cache_write_tokens),
        )
        if rest != Usage() or model not in self._totals:
            self._totals[model] = _sum(self._totals.get(model, Usage()), rest)
        self._turn = Usage()

    def cost_usd(self) -> float:
        return sum(_cost(model, usage) for model, usage in self._totals.items())

    def to_frame(self) -> dict[str, dict[str, Any]]:
        return {model: _model_usage(model, usage) for model, usage in self._totals.items()}


def _sum(a: Usage, b: Usage) -> Usage:
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        cache_read_tokens=a.cache_read_tokens + b.cache_read_tokens,
        cache_write_tokens=a.cache_write_tokens + b.cache_write_tokens,
    )


def _cost(model: str, usage: Usage) -> float:
    return catalog.cost_usd(
        model,
        CallUsage(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
        ),
    )


def _model_usage(model: str, usage: Usage) -> dict[str, Any]:
    entry = catalog.describe(model)
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadInputTokens": usage.cache_read_tokens,
        "cacheCreationInputTokens": usage.cache_write_tokens,
        "webSearchRequests": 0,
        "costUSD": _cost(model, usage),
        "contextWindow": entry.context_window,
        "maxOutputTokens": entry.max_output,
    }


def api_key_source(provider: str) -> str:
    """Claude Code's `apiKeySource`: agentls reads keys from the environment only."""
    if provider == "anthropic" and os.environ.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_API_KEY"
    return "none"


def budget_spent(result: dict[str, Any], budget: float) -> dict[str, Any]:
    stopped = {k: v for k, v in result.items() if k != "result"}
    why = f"the cost reached the budget of ${budget:g} (--max-budget-usd)"
    return {
        **stopped,
        "subtype": "error_max_budget_usd",
        "is_error": True,
        "terminal_reason": "budget_exhausted",
        "errors": [why],
    }

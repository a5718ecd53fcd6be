"""Extended thinking: opt-in levels, the per-model family, and the request fields they become.

Levels: `True` (the bare `--think` flag), `"think"`, `"hard"`, `"ultra"`. Thinking is on when a
level is given, or when only a budget is.

- adaptive models (opus 4.6 and later, sonnet 4.6 and later) get
  `thinking: {type: adaptive}` and `output_config: {effort}`;
- legacy models (sonnet 3.x/4.0/4.5, opus 3/4.0/4.1/4.5, haiku 4.5) get
  `thinking: {type: enabled, budget_tokens}` and a max_tokens that leaves room for the answer;
- OpenAI's o-series and gpt-5 get `reasoning.effort` (medium, high, high; bare: high);
- everything else (haiku 3.x, unknown ids, other wires) gets nothing; when thinking was asked
  for a model that neither takes it nor thinks on its own, a warning says so once (stderr and
  the log file).

Temperature is always removed when thinking is on.
"""

from __future__ import annotations

import argparse
import logging
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from server.providers.catalog import describe, efforts, family, normalize, reasons

log = logging.getLogger(__name__)

Level = Literal["think", "hard", "ultra"] | bool

LEVELS = ("think", "hard", "ultra")
# The first level the model takes wins: opus 4.6 and sonnet 4.6 have no xhigh, only max.
EFFORT = {"think": ("medium",), "hard": ("high",), "ultra": ("xhigh", "max", "high")}
BARE_EFFORT = "high"
OPENAI_EFFORT = {"think": "medium", "hard": "high", "ultra": "high"}
_OPENAI_REASONING = re.compile(r"^(o\d|gpt-5)")
DEFAULT_BUDGET = 8000
MIN_BUDGET = 1024
ANSWER_ROOM = 8192

# Sampling options the API refuses alongside thinking; None deletes them in the merge.
_NO_TEMP: dict[str, Any] = {"temperature": None, "topP": None}


@dataclass(frozen=True)
class ThinkingRequest:
    """What the user asked for on this turn: a level (None: off) and an optional budget."""

    level: Level | None = None
    budget: int | None = None

    @property
    def enabled(self) -> bool:
        return self.level is not None and self.level is not False


def parse_level(value: Any) -> Level | None:
    """A level from a flag, config or prompt option; None for off or anything unknown."""
    if value is True:
        return True
    if isinstance(value, str) and value.lower() in LEVELS:
        return value.lower()  # type: ignore[return-value]
    return None


def parse_budget(value: Any) -> int | None:
    """Positive numbers, floored; anything else (text, zero, negatives, NaN, bools) is ignored."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number) or math.floor(number) < 1:
        return None
    return math.floor(number)


def choose(think: Any, budget: Any, llm: dict[str, Any]) -> ThinkingRequest:
    """Per-prompt values win over the config's `llm.think` / `llm.thinkingBudget`; an explicit
    `think: false` on the prompt turns thinking off even when the config has a budget."""
    if think is False:
        return ThinkingRequest()
    level = parse_level(think) if think is not None else parse_level(llm.get("think"))
    chosen = parse_budget(budget) if budget is not None else parse_budget(llm.get("thinkingBudget"))
    if level is None and chosen is not None:
        level = True
    return ThinkingRequest(level, chosen if level is not None else None)


def options(
    wire: str, model_id: str, request: ThinkingRequest, *, max_tokens: int | None
) -> dict[str, Any]:
    """The option layer thinking adds (an empty dict when it adds nothing)."""
    if not request.enabled:
        return {}
    kind = family(model_id) if wire == "anthropic" else "none"
    if kind == "adaptive":
        effort = _effort(model_id, request.level)
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}} | _NO_TEMP
    if kind == "legacy":
        tokens, total = budget(model_id, request, max_tokens)
        thinking = {"type": "enabled", "budget_tokens": tokens}
        return {"thinking": thinking, "maxTokens": total} | _NO_TEMP
    if wire == "openai" and _OPENAI_REASONING.match(normalize(model_id or "")):
        effort = BARE_EFFORT if request.level is True else OPENAI_EFFORT[str(request.level)]
        return {"reasoning": {"effort": effort}}
    _notice_cannot_think(wire, model_id)
    return {}


_noticed: set[tuple[str, str]] = set()


def _notice_cannot_think(wire: str, model_id: str) -> None:
    if reasons(model_id) or (wire, model_id) in _noticed:
        return
    _noticed.add((wire, model_id))
    log.warning(
        "thinking was asked for, but %s cannot think on request through the %s API; "
        "it answers without thinking",
        model_id,
        wire,
    )


def _effort(model_id: str, level: Level | None) -> str:
    wanted = (BARE_EFFORT,) if level is True else EFFORT[str(level)]
    supported = efforts(model_id)
    return next((e for e in wanted if e in supported), BARE_EFFORT)


def budget(model_id: str, request: ThinkingRequest, max_tokens: int | None) -> tuple[int, int]:
    """The thinking budget and the max_tokens around it. max_tokens counts the thinking too, so
    it grows to leave `ANSWER_ROOM` for the answer, within the model's output cap; a budget the
    cap cannot hold with that room shrinks (to 1024 at least)."""
    cap = describe(model_id).max_output
    chosen = max(MIN_BUDGET, min(request.budget or DEFAULT_BUDGET, cap - ANSWER_ROOM))
    total = min(cap, max(max_tokens or 0, chosen + ANSWER_ROOM))
    return chosen, total


def room_for_answer(model_id: str, merged: dict[str, Any]) -> dict[str, Any]:
    """Options that carry `thinking: {type: enabled, budget_tokens}` themselves (the config's
    `providerOptions`, a skill's) get the max_tokens a requested budget gets (`budget`)."""
    setting = merged.get("thinking")
    if not isinstance(setting, dict) or setting.get("type") != "enabled":
        return merged
    chosen = parse_budget(setting.get("budget_tokens"))
    if chosen is None or family(model_id) == "none":
        return merged
    tokens, total = budget(model_id, ThinkingRequest(True, chosen), merged.get("maxTokens"))
    return {**merged, "thinking": {**setting, "budget_tokens": tokens}, "maxTokens": total}


def add_thinking_flags(parser: argparse.ArgumentParser) -> None:
    """`--think [think|hard|ultra]`, `--ultrathink`, `--thinking-budget N`."""
    group = parser.add_argument_group("thinking")
    group.add_argument(
        "--think",
        nargs="?",
        const=True,
        choices=LEVELS,
        help="let the model think before answering (level: think, hard, ultra; default: hard)",
    )
    group.add_argument("--ultrathink", action="store_true", help="the same as --think ultra")
    group.add_argument(
        "--thinking-budget",
        metavar="N",
        help="thinking token budget for models that take one (positive number)",
    )


def thinking_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The config fragment the thinking flags set: `{"llm": {"think", "thinkingBudget"}}`."""
    llm: dict[str, Any] = {}
    level = "ultra" if getattr(args, "ultrathink", False) else getattr(args, "think", None)
    if level is not None:
        llm["think"] = level
    chosen = parse_budget(getattr(args, "thinking_budget", None))
    if chosen is not None:
        llm["thinkingBudget"] = chosen
    return {"llm": llm} if llm else {}

"""Declared facts for `agentls replay --verify --case FILE`: what a replayed turn must do, on
top of the built-in facts. A case file is JSON:

    {
      "tools": ["read_file", "edit_file"],      the exact sequence of tool names
      "toolsInclude": ["edit_file"],             these tools, in this order, among others
      "changed": ["src/app.py"],                 files that must change (workspace-relative)
      "unchanged": ["README.md"],                files that must not
      "writableOnly": ["src/**", "tests/*.py"],  no file outside these patterns may change
      "answerContains": ["fixed"]                text the final answer must contain
    }

A fact that does not hold while some call of the replay was blocked is `blocked`, not failed:
what the blocked call would have done is unknown.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.sessions.verify import Evidence, Fact, calls, stopped_calls, tree

KEYS = ("tools", "toolsInclude", "changed", "unchanged", "writableOnly", "answerContains")


class CaseError(ValueError):
    pass


def load_case(path: Path) -> dict[str, list[str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CaseError(f"cannot read the case file {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise CaseError(f"the case file {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise CaseError(f"the case file {path} must hold an object")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise CaseError(f"unknown keys in the case file {path}: {', '.join(unknown)}")
    for key, value in data.items():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise CaseError(f"{key} in the case file {path} must be a list of strings")
    return data


def case_facts(case: dict[str, list[str]], ev: Evidence) -> list[Fact]:
    after = tree(ev.scratch)
    changed = {
        p for p in after.keys() | ev.tree_before.keys() if after.get(p) != ev.tree_before.get(p)
    }
    names = [c.name for c in calls(ev.replay)]
    checks: dict[str, Callable[[list[str]], Fact]] = {
        "tools": lambda want: _tools(want, names),
        "toolsInclude": lambda want: _tools_include(want, names),
        "changed": lambda want: _changed(want, changed),
        "unchanged": lambda want: _unchanged(want, changed),
        "writableOnly": lambda want: _writable_only(want, changed),
        "answerContains": lambda want: _answer(want, answer(ev.replay)),
    }
    blocked = stopped_calls(ev)
    facts = []
    for key in KEYS:
        if key not in case:
            continue
        fact = checks[key](case[key])
        if fact.passed is False and blocked:
            fact.passed, fact.blocked = None, True
            plural = "s" if len(blocked) > 1 else ""
            fact.detail += f"; {len(blocked)} blocked call{plural} may have done it"
        facts.append(fact)
    return facts


def answer(updates: list[dict[str, Any]]) -> str:
    return "".join(u.get("text", "") for u in updates if u.get("kind") == "agent_message_chunk")


def _fact(key: str, description: str, problem: str | None, detail: str = "") -> Fact:
    if problem:
        return Fact(f"case.{key}", description, False, problem)
    return Fact(f"case.{key}", description, True, detail)


def _tools(want: list[str], names: list[str]) -> Fact:
    problem = None
    if names != want:
        problem = f"the replay called {', '.join(names) or 'no tools'}"
    return _fact("tools", f"the tools called are {', '.join(want) or 'none'}", problem)


def _tools_include(want: list[str], names: list[str]) -> Fact:
    rest = iter(names)
    missing = next((w for w in want if w not in rest), None)  # `in` consumes: order counts
    problem = None
    if missing is not None:
        problem = f"{missing} is not called (in this order); called: {', '.join(names) or 'none'}"
    return _fact("toolsInclude", f"the tools called include {', '.join(want)}", problem)


def _changed(want: list[str], changed: set[str]) -> Fact:
    missing = [p for p in want if _norm(p) not in changed]
    problem = f"{', '.join(missing)} did not change" if missing else None
    return _fact("changed", f"{', '.join(want)} changed", problem)


def _unchanged(want: list[str], changed: set[str]) -> Fact:
    touched = [p for p in want if _norm(p) in changed]
    problem = f"{', '.join(touched)} changed" if touched else None
    return _fact("unchanged", f"{', '.join(want)} did not change", problem)


def _writable_only(patterns: list[str], changed: set[str]) -> Fact:
    outside = sorted(p for p in changed if not any(fnmatch.fnmatch(p, g) for g in patterns))
    problem = f"{', '.join(outside[:5])} changed, outside them" if outside else None
    return _fact(
        "writableOnly",
        f"only files matching {', '.join(patterns)} changed",
        problem,
        f"{len(changed)} files changed",
    )


def _answer(want: list[str], text: str) -> Fact:
    missing = [w for w in want if w not in text]
    problem = f"the answer lacks {', '.join(repr(m) for m in missing)}" if missing else None
    return _fact("answerContains", "the answer contains " + ", ".join(map(repr, want)), problem)


def _norm(path: str) -> str:
    return Path(path).as_posix().removeprefix("./")

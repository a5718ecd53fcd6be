"""Checking a replayed turn against the recording: a list of declared facts, each holding,
failing (with where and why), blocked (it could not be checked: the sandbox or the replay stopped
what it needed), or not applying to this turn.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from server.sessions.effects import BLOCKED_KEY
from server.sessions.replay import mapped, prepare_workspace, run_turn
from server.sessions.store import Store
from server.sessions.traces import SessionTrace

WRITING_KINDS = ("edit", "delete", "move", "execute")
# Results of these kinds depend on the world (clock, network, processes), not the workspace.
VOLATILE_KINDS = ("execute", "fetch")


@dataclass
class Call:
    """A tool call as the update stream showed it."""

    id: str
    name: str
    title: str
    kind: str
    input: dict[str, Any]
    status: str = "announced"
    output: str | None = None
    error: str | None = None
    diff: dict[str, Any] | None = None

    def label(self, index: int) -> str:
        return f"call {index} {self.name} ({self.title})"

    def blocked(self) -> str | None:
        """What stopped this call in a replay (the sandbox, or the replay itself), or None."""
        text = f"{self.output or ''}{self.error or ''}"
        found = _BLOCKED.search(text)
        if found is None:
            return None
        if found.group(1) == BLOCKED_KEY:
            return json.loads(f'"{found.group(2)}"')
        what = {"write": "a write outside the workspace", "network": "a network connection"}
        return f"the sandbox stopped {what.get(found.group(2), found.group(2))}"


_BLOCKED = re.compile(rf'"(sandboxBlocked|{BLOCKED_KEY})": "((?:[^"\\]|\\.)*)"')
_READ_ONLY = re.compile(r"read-only file system", re.IGNORECASE)


def stopped(call: Call, original: Call | None) -> str | None:
    """What stopped `call` in the replay: what it says itself (`Call.blocked`), or, for a
    command that went on after a write the sandbox refused (and so did not fail), that write,
    when the original's output shows no such refusal."""
    if why := call.blocked():
        return why
    if call.kind != "execute" or not _READ_ONLY.search(f"{call.output or ''}{call.error or ''}"):
        return None
    if original is not None and _READ_ONLY.search(f"{original.output or ''}{original.error or ''}"):
        return None
    return "the sandbox stopped a write (read-only file system), and the command went on"


FactStatus = Literal["passed", "failed", "blocked", "n/a"]


@dataclass
class Fact:
    name: str
    description: str
    passed: bool | None
    """None when the fact does not apply to this turn, or is blocked."""
    detail: str = ""
    blocked: bool = False

    @property
    def status(self) -> FactStatus:
        if self.blocked:
            return "blocked"
        if self.passed is None:
            return "n/a"
        return "passed" if self.passed else "failed"


@dataclass
class Evidence:
    """Both sides of the comparison."""

    original: list[dict[str, Any]]
    replay: list[dict[str, Any]]
    original_terminal: dict[str, Any]
    replay_terminal: dict[str, Any]
    original_cwd: Path
    scratch: Path
    tree_before: dict[str, str] = field(default_factory=dict)
    recorded: list[str] = field(default_factory=list)
    """Calls of the replay that returned their recorded result."""


def calls(updates: list[dict[str, Any]]) -> list[Call]:
    found: dict[str, Call] = {}
    for u in updates:
        if u.get("kind") == "tool_call":
            found[u["toolCallId"]] = Call(
                u["toolCallId"], u["name"], u.get("title", ""), u.get("toolKind", ""), u["input"]
            )
        elif u.get("kind") == "tool_call_update" and u["toolCallId"] in found:
            call = found[u["toolCallId"]]
            call.status = u["status"]
            call.output, call.error = u.get("output"), u.get("error")
            call.diff = u.get("diff") or call.diff
    return tree_order(list(found.values()))


def tree_order(announced: list[Call]) -> list[Call]:
    """Each subagent's calls right after the `task` call that started it, in their own order.
    Subagents that run at once interleave their calls differently in every run; nested ids
    (`<task call id>/<id>`) say whose each call is, which no scheduling changes."""
    children: dict[str, list[Call]] = {}
    for call in announced:
        children.setdefault(call.id.rpartition("/")[0], []).append(call)
    ordered: list[Call] = []
    todo = list(reversed(children.get("", [])))
    while todo:
        call = todo.pop()
        ordered.append(call)
        todo.extend(reversed(children.pop(call.id, [])))
    placed = {id(c) for c in ordered}
    return ordered + [c for c in announced if id(c) not in placed]  # under no call we saw


def tree(root: Path) -> dict[str, str]:
    """Relative path -> content hash of every file under `root` (`.git` left out)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git" or not path.is_file() or path.is_symlink():
            continue
        out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def same_calls(ev: Evidence) -> Fact:
    fact = Fact("same_tool_calls", "the same tool calls in the same order", True)
    old, new = calls(ev.original), calls(ev.replay)
    for i, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if (a.name, a.input) != (b.name, b.input):
            return _fail(fact, f"call {i}: the original called {_show(a)}, the replay {_show(b)}")
    if len(old) != len(new):
        return _fail(fact, f"the original made {len(old)} tool calls, the replay {len(new)}")
    fact.detail = f"{len(old)} calls"
    return fact


def no_new_failures(ev: Evidence) -> Fact:
    fact = Fact("no_new_tool_failures", "no tool failure that the original did not have", True)
    old = calls(ev.original)
    for i, b in enumerate(calls(ev.replay), 1):
        before = old[i - 1].status if i <= len(old) else None
        if b.blocked():
            continue  # effects_reproduced says so
        if b.status in ("failed", "denied") and before not in ("failed", "denied"):
            return _fail(fact, f"{b.label(i)} {b.status} in the replay: {b.error}")
    return fact


def same_results(ev: Evidence) -> Fact:
    fact = Fact("same_tool_results", "tools that read the workspace returned the same", True)
    for i, (a, b) in enumerate(zip(calls(ev.original), calls(ev.replay), strict=False), 1):
        if a.kind in VOLATILE_KINDS or a.status != "completed" or b.status != "completed":
            continue
        if b.blocked():
            continue
        if a.output != b.output:
            where = _first_difference(a.output or "", b.output or "")
            return _fail(fact, f"{a.label(i)}: the result differs, {where}")
    return fact


def files_match(ev: Evidence) -> Fact:
    fact = Fact("files_written_match", "files written match", True)
    expected = {c.diff["path"]: c.diff["newText"] for c in calls(ev.original) if c.diff}
    written = {c.diff["path"] for c in calls(ev.replay) if c.diff}
    if not expected and not written:
        return Fact(fact.name, fact.description, None, "the turn wrote no files")
    extra = sorted(written - set(expected))
    if extra:
        return _fail(fact, f"the replay wrote {extra[0]}, which the original did not")
    for path, text in expected.items():
        target = mapped(path, ev.original_cwd, ev.scratch)
        actual = _read(target)
        if actual != text:
            where = "it is missing" if actual is None else _first_difference(text, actual)
            return _fail(fact, f"{path}: {where}")
    fact.detail = f"{len(expected)} files"
    return fact


def read_only(ev: Evidence) -> Fact:
    fact = Fact("read_only_wrote_nothing", "a read-only turn wrote nothing", True)
    if any(c.kind in WRITING_KINDS or c.diff for c in calls(ev.original)):
        return Fact(fact.name, fact.description, None, "the turn was not read-only")
    after = tree(ev.scratch)
    changed = sorted(
        p for p in after.keys() | ev.tree_before.keys() if after.get(p) != ev.tree_before.get(p)
    )
    if changed:
        return _fail(fact, f"the replay changed {', '.join(changed[:5])}")
    return fact


def effects_reproduced(ev: Evidence) -> Fact:
    fact = Fact(
        "effects_reproduced",
        "commands and calls beyond the workspace ran as recorded",
        True,
    )
    reaching = [
        (i, c)
        for i, c in enumerate(calls(ev.replay), 1)
        if c.kind in VOLATILE_KINDS or c.id in ev.recorded or c.blocked()
    ]
    if not reaching:
        return Fact(fact.name, fact.description, None, "the turn ran no commands")
    held = stopped_calls(ev)
    if held:
        i, call, why = held[0]
        more = f" (and {len(held) - 1} more)" if len(held) > 1 else ""
        fact.passed, fact.blocked = None, True
        fact.detail = f"{call.label(i)}: {why}{more}"
        return fact
    played = len([c for _, c in reaching if c.id in ev.recorded])
    ran = len(reaching) - played
    parts = [f"{ran} ran in the sandbox"] if ran else []
    parts += [f"{played} recorded results played"] if played else []
    fact.detail = ", ".join(parts)
    return fact


def stopped_calls(ev: Evidence) -> list[tuple[int, Call, str]]:
    """The replay's calls that something stopped (`stopped`): index, call, why."""
    old = calls(ev.original)
    return [
        (i, c, why)
        for i, c in enumerate(calls(ev.replay), 1)
        if (why := stopped(c, old[i - 1] if i <= len(old) else None))
    ]


def same_terminal(ev: Evidence) -> Fact:
    fact = Fact("same_terminal", "the turn ended the same way", True)
    a, b = ev.original_terminal, ev.replay_terminal
    if (a.get("terminal"), a.get("stopReason")) != (b.get("terminal"), b.get("stopReason")):
        shown = f"{b.get('terminal')} ({b.get('stopReason')})"
        error = f": {b['error']}" if b.get("error") else ""
        return _fail(
            fact,
            f"the original ended {a.get('terminal')} ({a.get('stopReason')}), "
            f"the replay {shown}{error}",
        )
    return fact


FACTS: list[Callable[[Evidence], Fact]] = [
    same_calls,
    no_new_failures,
    same_results,
    files_match,
    read_only,
    effects_reproduced,
    same_terminal,
]


def verify(ev: Evidence) -> list[Fact]:
    return [check(ev) for check in FACTS]


def _fail(fact: Fact, detail: str) -> Fact:
    fact.passed, fact.detail = False, detail
    return fact


def _show(call: Call) -> str:
    return f"{call.name} {json.dumps(call.input, ensure_ascii=False)[:200]}"


def _read(path: Path | None) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="replace") if path else None
    except OSError:
        return None


def _first_difference(expected: str, actual: str) -> str:
    """Where two texts first differ, with a little context from each."""
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    line = expected.count("\n", 0, at) + 1
    start = max(0, at - 30)
    return (
        f"from line {line}: expected {expected[start : at + 50]!r}, got {actual[start : at + 50]!r}"
    )


@dataclass
class Report:
    """One replayed turn and, when asked, its verification."""

    session_id: str
    turn_id: str
    workspace: str
    original: dict[str, Any]
    replay: dict[str, Any]
    facts: list[Fact] | None
    notes: list[str] = field(default_factory=list)
    stored_as: str | None = None
    """The replay's own stored session."""

    @property
    def verdict(self) -> Literal["passed", "failed", "blocked"] | None:
        """`failed` when a fact fails; else `blocked` when one could not be checked."""
        if self.facts is None:
            return None
        statuses = {f.status for f in self.facts}
        return (
            "failed" if "failed" in statuses else "blocked" if "blocked" in statuses else "passed"
        )

    @property
    def passed(self) -> bool | None:
        return None if self.facts is None else self.verdict == "passed"

    def to_json(self) -> dict[str, Any]:
        facts = (
            None if self.facts is None else [{**vars(f), "status": f.status} for f in self.facts]
        )
        return {
            "sessionId": self.session_id,
            "turnId": self.turn_id,
            "workspace": self.workspace,
            "original": self.original,
            "replay": self.replay,
            "verified": self.passed,
            "verdict": self.verdict,
            "facts": facts,
            "notes": self.notes,
            "replaySessionId": self.stored_as,
        }


def summary(updates: list[dict[str, Any]], terminal: dict[str, Any]) -> dict[str, Any]:
    return {
        "terminal": terminal.get("terminal"),
        "stopReason": terminal.get("stopReason"),
        "error": terminal.get("error"),
        "toolCalls": [
            {"name": c.name, "title": c.title, "status": c.status} for c in calls(updates)
        ],
    }


async def replay(
    trace: SessionTrace,
    turn_id: str | None,
    *,
    workspace: Path | None = None,
    check: bool = True,
    keep: bool = False,
    recorded_effects: bool = False,
    more_facts: Callable[[Evidence], list[Fact]] | None = None,
    store: Store | None = None,
) -> Report:
    """Re-run a recorded turn in a scratch copy of `workspace` (default: the session's own
    workspace) and, with `check`, verify it. The copy is removed unless `keep`.
    `recorded_effects`: calls that reach beyond the copy return their recorded results;
    `more_facts`: declared facts checked after the built-in ones (a case file); `store`: where
    the replay is stored as a session of its own (the replay closes it)."""
    turn = trace.turn(turn_id)
    original = Path(trace.session["cwd"])
    scratch = Path(tempfile.mkdtemp(prefix="agentls-replay-")) / original.name
    try:
        notes = prepare_workspace(
            workspace or original, original, scratch, trace.turns_from(turn.id)
        )
        before = tree(scratch) if check else {}
        run = await run_turn(trace, turn, scratch, recorded_effects=recorded_effects, store=store)
        terminal = run.result.to_wire()
        recorded = turn.terminal or {"terminal": "running"}
        if run.unused_calls:
            notes.append(f"{run.unused_calls} recorded model calls were not used")
        evidence = Evidence(
            turn.updates, run.updates, recorded, terminal, original, scratch, before, run.recorded
        )
        return Report(
            session_id=trace.session.get("id", ""),
            turn_id=turn.id,
            workspace=str(scratch),
            original=summary(turn.updates, recorded),
            replay=summary(run.updates, terminal),
            facts=[*verify(evidence), *(more_facts(evidence) if more_facts else [])]
            if check
            else None,
            notes=notes,
            stored_as=run.session_id if store is not None else None,
        )
    finally:
        if not keep:
            shutil.rmtree(scratch.parent, ignore_errors=True)

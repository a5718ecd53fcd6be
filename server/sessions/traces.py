"""A session's trace as JSONL (`agentls sessions export`), and reading one back for replay.

Lines, in order: one `session`, one `turn` per turn, one `message` per transcript message, then
one `trace` per trace row (`kind`: prompt, update, permission, question, provider_request,
provider_response, terminal). Replay accepts the file or an id found in the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.providers import codec
from server.providers.replay import RecordedCall
from server.sessions.store import Store
from server.timestamps import iso


class TraceError(Exception):
    """The trace cannot be found or read."""


def export_lines(store: Store, session_id: str) -> Iterator[dict[str, Any]]:
    record = store.session(session_id)
    if record is None:
        raise TraceError(f"no stored session {session_id!r}")
    yield {
        "type": "session",
        "id": record.id,
        "cwd": record.cwd,
        "engine": record.engine,
        "title": record.title,
        "createdAt": iso(record.created_at),
        "updatedAt": iso(record.updated_at),
        "state": record.state,
    }
    for turn in store.turns(session_id):
        yield {
            "type": "turn",
            "id": turn.id,
            "status": turn.status,
            "stopReason": turn.stop_reason,
            "error": turn.error,
            "prompt": turn.prompt,
            "startedAt": iso(turn.started_at),
            "endedAt": iso(turn.ended_at) if turn.ended_at else None,
        }
    for idx, message in enumerate(store.transcript(session_id)):
        yield {"type": "message", "idx": idx, "message": message}
    for row in store.trace(session_id):
        yield {"type": "trace", "time": iso(row["ts"]), **row}


@dataclass
class TurnTrace:
    """What one recorded turn did, as replay and verification need it."""

    id: str
    prompt: dict[str, Any] = field(default_factory=dict)
    """The `prompt` trace row: prompt blocks, options, state, historyLength, capabilities."""
    updates: list[dict[str, Any]] = field(default_factory=list)
    calls: list[RecordedCall] = field(default_factory=list)
    permissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)
    terminal: dict[str, Any] | None = None


@dataclass
class SessionTrace:
    session: dict[str, Any]
    messages: list[dict[str, Any]]
    turns: list[TurnTrace]

    def turn(self, turn_id: str | None) -> TurnTrace:
        if not self.turns:
            raise TraceError(f"session {self.session.get('id')} has no recorded turn")
        if turn_id is None:
            return self.turns[-1]
        for turn in self.turns:
            if turn.id == turn_id:
                return turn
        raise TraceError(f"no turn {turn_id!r} in session {self.session.get('id')}")

    def turns_from(self, turn_id: str) -> list[TurnTrace]:
        index = next(i for i, t in enumerate(self.turns) if t.id == turn_id)
        return self.turns[index:]


def load(source: str, store: Store | None) -> tuple[SessionTrace, str | None]:
    """A trace from a JSONL file, or from the store by session or turn id. Returns it with the
    turn id the source named, if it named one."""
    path = Path(source)
    if path.is_file():
        return parse(path.read_text(encoding="utf-8").splitlines()), None
    if store is None:
        raise TraceError(f"{source}: no such file")
    session_id, turn_id = store.session_of(source)
    if session_id is None:
        raise TraceError(f"{source}: neither a trace file nor a stored session or turn id")
    return parse(json.dumps(line) for line in export_lines(store, session_id)), turn_id


def parse(lines: Any) -> SessionTrace:
    session: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    turns: dict[str, TurnTrace] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise TraceError(f"line {number} is not JSON: {exc}") from exc
        kind = item.get("type")
        if kind == "session":
            session = item
        elif kind == "turn":
            turns.setdefault(item["id"], TurnTrace(item["id"]))
        elif kind == "message":
            messages.append(item["message"])
        elif kind == "trace" and item.get("turnId"):
            _add_row(turns.setdefault(item["turnId"], TurnTrace(item["turnId"])), item)
    if not session:
        raise TraceError("the trace has no session line")
    return SessionTrace(session, messages, list(turns.values()))


def _add_row(turn: TurnTrace, row: dict[str, Any]) -> None:
    kind, data = row["kind"], row["data"]
    if kind == "prompt":
        turn.prompt = data
    elif kind == "update":
        turn.updates.append(data)
    elif kind == "provider_response":
        turn.calls.append(_recorded_call(data))
    elif kind == "permission":
        turn.permissions[data["request"]["toolCall"]["toolCallId"]] = data["result"]
    elif kind == "question":
        turn.questions.append(data["result"])
    elif kind == "terminal":
        turn.terminal = data


def _recorded_call(data: dict[str, Any]) -> RecordedCall:
    error = data.get("error") or {}
    return RecordedCall(
        events=codec.events_from_dicts(data.get("events", [])),
        error=error.get("message"),
        status=error.get("status"),
        retryable=bool(error.get("retryable")),
        subagent=(data.get("subagent") or {}).get("id"),
    )

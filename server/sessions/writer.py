"""Applying queued writes to the session database, in the store's writer thread.

One transaction per batch. Consecutive message (or thought) chunks of a turn merge into one
journal entry, indexed for search once it is complete, and into one `chunks` trace row per
batch (`ChunkRow`; `Store.trace` gives them back as the `update` rows they stand for, each with
its seq and time). While the reply streams, its journal entry is rewritten only when its text
has doubled since the last write (rewriting it with each batch made a long answer's cost grow
with its square); the trace holds every chunk, so a turn its server never finished gets its
entry back whole from there (`op_abort`). A `stream_retry` removes what the failed model call
streamed (its text, thoughts and tool calls, and those calls' failures), as
clients discard it; the prompt, steers and reports before it stay. An ended turn takes no more
text or snapshots; it still takes updates and trace rows, which come from work that outlives
it (a background subagent's cards and model calls, filed under the turn that started it).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any, assert_never, cast

from protocol.updates import UPDATE_KINDS, TurnEnd, UpdateKind, Usage
from server.sessions.search import entry_text, index_text

RUN_KINDS = ("agent_message_chunk", "agent_thought_chunk")
ATTEMPT_KINDS = (*RUN_KINDS, "tool_call")
"""What a model call streams; a retry takes these back (and its calls' updates), never the
prompt, steers, reports or notes."""
INTERRUPTED = "the server stopped before this turn finished"
_ENDED_KEPT = 10_000


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def journal_role(update: dict[str, Any]) -> str | None:
    """The journal role of a stored update a replayed session shows; None for progress,
    notes and kinds this version does not know."""
    kind = update.get("kind")
    if kind not in UPDATE_KINDS:
        return None
    match cast(UpdateKind, kind):
        case "user_message_chunk":
            return "user"
        case "agent_message_chunk":
            return "assistant"
        case "agent_thought_chunk":
            return "thinking"
        case "tool_call":
            return "tool"
        case "tool_call_update":
            return None if update.get("status") == "in_progress" else "tool"
        case "plan":
            return "plan"
        case "question":
            return None if update.get("outcome") is None else "event"
        case "subagent":
            return None if update.get("status") == "running" else "event"
        case "model_switched" | "mode_changed" | "compaction" | "checkpoint" | "turn_end":
            return "event"
        case "step_finish" | "stream_retry" | "permission" | "mcp_status":
            return None  # progress: the cards and text it is about are journaled
        case "workspace_trust" | "store_warning":
            return None  # notes about the session's state, not part of the conversation
        case unknown:
            assert_never(unknown)


@dataclass
class Run:
    """Chunks of one kind being merged into the journal row `row`."""

    row: int
    kind: str
    texts: list[str] = field(default_factory=list)
    size: int = 0
    written: int = 0
    """The length of the text the row holds."""

    def add(self, text: str) -> None:
        self.texts.append(text)
        self.size += len(text)

    def behind(self) -> bool:
        """Whether the row should be rewritten now: its text has doubled since it was written."""
        return self.size >= 2 * self.written and self.size > self.written

    def entry(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": "".join(self.texts)}


@dataclass
class ChunkRow:
    """Chunk updates of one turn with consecutive seqs, traced as one row: the update without
    its text, the texts, and each one's time after the first (whole microseconds). The row's
    seq is the last one's, so the trace's highest seq stays the session's."""

    key: int
    ts: float
    base: dict[str, Any]
    seq: int
    texts: list[str] = field(default_factory=list)
    at: list[int] = field(default_factory=list)

    def joins(self, update: dict[str, Any]) -> bool:
        """Whether `update` differs from this row's only in its text."""
        base = self.base
        return len(update) == len(base) + 1 and all(update.get(k) == v for k, v in base.items())

    def add(self, seq: int, ts: float, text: str) -> None:
        self.seq = seq
        self.texts.append(text)
        self.at.append(int((ts - self.ts) * 1_000_000))  # down: never after the next row

    def row(self) -> tuple:
        data = {"update": self.base, "texts": self.texts, "at": self.at}
        return (self.key, self.seq, self.ts, "chunks", dumps(data))


class Writer:
    """Turns operations (`(name, *args)` tuples) into SQL. Not thread-safe: one thread owns it."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.runs: dict[str, Run] = {}
        self.marks: dict[str, int] = {}
        """Turn id -> first journal row the current model call streamed (since the last
        `step_finish`)."""
        self.ended: dict[str, None] = {}
        self.keys: dict[str, int] = {}
        """Turn id -> turns.n, for the turns this writer has seen."""
        self.trace_rows: list[tuple | ChunkRow] = []
        self.chunk_rows: dict[str, ChunkRow] = {}
        """Turn id -> its chunk row of this batch that the next chunk may join."""

    def apply(self, ops: list[tuple]) -> None:
        ended = dict(self.ended)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for op in ops:
                getattr(self, "op_" + op[0])(*op[1:])
            for run in self.runs.values():
                if run.behind():
                    self._set_entry(run.row, run.entry())
                    run.written = run.size
            self.conn.executemany(
                "INSERT INTO trace (turn, seq, ts, kind, data) VALUES (?, ?, ?, ?, ?)",
                [r.row() if isinstance(r, ChunkRow) else r for r in self.trace_rows],
            )
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self.ended = ended  # the batch may be applied again
            self.runs.clear()
            self.marks.clear()
            self.keys.clear()
            raise
        finally:
            self.trace_rows.clear()
            self.chunk_rows.clear()

    # -- operations ------------------------------------------------------------------------

    def op_session(self, sid: str, cwd: str, engine: str, state: dict, ts: float) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO sessions (id, cwd, engine, created_at, updated_at, state) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (sid, cwd, engine, ts, ts, dumps(state)),
        )

    def op_turn(
        self,
        sid: str,
        tid: str,
        prompt: str,
        title: str,
        owner: str,
        ts: float,
        seq: int | None,
        origin: str | None = None,
    ) -> None:
        cursor = self.conn.execute(
            "INSERT INTO turns (id, session_id, status, prompt, owner, started_at) "
            "VALUES (?, ?, 'running', ?, ?, ?)",
            (tid, sid, prompt, owner, ts),
        )
        assert cursor.lastrowid is not None
        self.keys[tid] = cursor.lastrowid
        self.conn.execute(
            "UPDATE sessions SET updated_at = ?, "
            "title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
            (ts, title, sid),
        )
        chunk = {"kind": "user_message_chunk", "text": prompt}
        self._insert(sid, tid, ts, {**chunk, "origin": origin} if origin else chunk, seq=seq)

    def op_update(self, sid: str, tid: str, seq: int, ts: float, update: Any) -> None:
        kind = update.get("kind", "") if isinstance(update, dict) else update.kind
        if tid in self.ended and kind in RUN_KINDS:  # nothing streams text into an ended turn
            return
        if kind in RUN_KINDS and isinstance(update, dict):
            self._trace_chunk(tid, seq, ts, update)
        elif isinstance(update, dict):
            self._trace(tid, seq, ts, "update", dumps(update))
        else:
            data = update.model_dump_json(by_alias=True, exclude_none=True)
            self._trace(tid, seq, ts, "update", data)
        self._journal(sid, tid, ts, kind, update, seq)

    def op_trace(self, sid: str, tid: str, seq: int | None, ts: float, kind: str, data: Any):
        self._trace(tid, seq, ts, kind, dumps(data))

    def _trace(self, tid: str, seq: int | None, ts: float, kind: str, data: str) -> None:
        key = self._key(tid)
        if key is not None:
            self.chunk_rows.pop(tid, None)
            self.trace_rows.append((key, seq, ts, kind, data))

    def _trace_chunk(self, tid: str, seq: int, ts: float, update: dict[str, Any]) -> None:
        row = self.chunk_rows.get(tid)
        if row is None or seq != row.seq + 1 or not row.joins(update):
            base = {k: v for k, v in update.items() if k != "text"}
            key = self._key(tid)
            if key is None:
                return
            row = self.chunk_rows[tid] = ChunkRow(key, ts, base, seq)
            self.trace_rows.append(row)
        row.add(seq, ts, update.get("text", ""))

    def _key(self, tid: str) -> int | None:
        if tid not in self.keys:
            row = self.conn.execute("SELECT n FROM turns WHERE id = ?", (tid,)).fetchone()
            if row is None:
                return None
            self.keys[tid] = row[0]
        return self.keys[tid]

    def op_end(self, sid: str, tid: str, ts: float, result: dict, snapshot: dict | None) -> None:
        """The terminal: close the turn; with a snapshot, save its state and new messages."""
        self._close_run(tid)
        self.marks.pop(tid, None)
        usage = result.get("usage")
        self.conn.execute(
            "UPDATE turns SET status = ?, stop_reason = ?, error = ?, usage = ?, ended_at = ? "
            "WHERE id = ?",
            (result["terminal"], result["stopReason"], result.get("error"), dumps(usage), ts, tid),
        )
        self.op_trace(sid, tid, None, ts, "terminal", result)
        if snapshot is not None:
            self._save_snapshot(sid, tid, snapshot)
        self.conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, sid))
        self.ended[tid] = None
        self.keys.pop(tid, None)
        if len(self.ended) > _ENDED_KEPT:
            del self.ended[next(iter(self.ended))]

    def op_step(self, sid: str, tid: str, snapshot: dict) -> None:
        if tid not in self.ended:
            self._save_snapshot(sid, tid, snapshot)

    def op_state(self, sid: str, patch: dict) -> None:
        self.conn.execute(
            "UPDATE sessions SET state = json_patch(state, ?) WHERE id = ?", (dumps(patch), sid)
        )

    def op_abort(self, sid: str, tid: str, ts: float) -> None:
        """Close a turn its server never finished (found `running` at startup)."""
        for row, entry, first in self.conn.execute(
            "SELECT id, entry, seq FROM journal WHERE turn_id = ? AND open = 1", (tid,)
        ).fetchall():
            entry = json.loads(entry)
            if first is not None and entry.get("kind") in RUN_KINDS:
                streamed = self._streamed(tid, first, entry["kind"])
                if len(streamed) > len(entry["text"]) and streamed.startswith(entry["text"]):
                    entry["text"] = streamed
            self.conn.execute(
                "UPDATE journal SET entry = ?, open = 0 WHERE id = ?", (dumps(entry), row)
            )
            self._index(row, entry)
        seq = self._last_seq(sid)
        for call_id in self._unfinished_calls(tid):
            update = {"kind": "tool_call_update", "toolCallId": call_id, "status": "failed"}
            seq += 1
            self._insert(sid, tid, ts, {**update, "error": INTERRUPTED}, seq=seq)
        end = TurnEnd(terminal="aborted", stop_reason="cancelled", usage=Usage(), error=INTERRUPTED)
        self._insert(sid, tid, ts, end.to_wire(), seq=seq + 1)
        result = {k: v for k, v in end.to_wire().items() if k != "kind"}
        self.op_end(sid, tid, ts, {"turnId": tid, **result}, None)

    def _streamed(self, tid: str, first: int, kind: str) -> str:
        """The text of the run of `kind` chunks the trace holds from seq `first` on."""
        key = self._key(tid)
        if key is None:
            return ""
        rows = self.conn.execute(
            "SELECT seq, ts, kind, data FROM trace WHERE turn = ? AND seq >= ? ORDER BY id",
            (key, first),
        )
        texts: list[str] = []
        expected = first
        for seq, ts, row_kind, data in rows:
            if row_kind not in ("chunks", "update"):
                continue
            value = json.loads(data)
            updates = chunk_updates(tid, seq, ts, value) if row_kind == "chunks" else [
                {"seq": seq, "data": value}
            ]  # fmt: skip
            for update in updates:
                if update["seq"] < expected:
                    continue
                if update["seq"] > expected or update["data"].get("kind") != kind:
                    return "".join(texts)
                texts.append(update["data"].get("text", ""))
                expected += 1
        return "".join(texts)

    # -- the journal ---------------------------------------------------------------------------

    def _last_seq(self, sid: str) -> int:
        journal = self.conn.execute("SELECT MAX(seq) FROM journal WHERE session_id = ?", (sid,))
        trace = self.conn.execute(
            "SELECT MAX(r.seq) FROM turns t JOIN trace r ON r.turn = t.n WHERE t.session_id = ?",
            (sid,),
        )
        return max(journal.fetchone()[0] or 0, trace.fetchone()[0] or 0)

    def _journal(
        self, sid: str, tid: str, ts: float, kind: str, update: Any, seq: int | None
    ) -> None:
        run = self.runs.get(tid)
        if run is not None and run.kind != kind:
            self._close_run(tid)
            run = None
        if kind == "stream_retry":
            self._discard_step(tid)
        elif kind == "step_finish":
            self.marks.pop(tid, None)
        elif kind in RUN_KINDS:
            text = update["text"] if isinstance(update, dict) else update.text
            if run is None:
                entry = {"kind": kind, "text": text}
                row = self._insert(sid, tid, ts, entry, open_run=True, seq=seq)
                run = self.runs[tid] = Run(row, kind, written=len(text))
            run.add(text)
        else:
            wire = update if isinstance(update, dict) else update.to_wire()
            if journal_role(wire) is not None:
                self._insert(sid, tid, ts, wire, seq=seq)

    def _insert(
        self,
        sid: str,
        tid: str,
        ts: float,
        entry: dict,
        *,
        open_run: bool = False,
        seq: int | None = None,
    ) -> int:
        role = journal_role(entry) or "event"
        cursor = self.conn.execute(
            "INSERT INTO journal (session_id, turn_id, ts, role, entry, open, seq) "
            "VALUES (?,?,?,?,?,?,?)",
            (sid, tid, ts, role, dumps(entry), int(open_run), seq),
        )
        row = cursor.lastrowid
        assert row is not None
        if entry.get("kind") in ATTEMPT_KINDS and tid not in self.ended:
            self.marks.setdefault(tid, row)
        if not open_run:
            self._index(row, entry)
        return row

    def _index(self, row: int, entry: dict[str, Any]) -> None:
        text = entry_text(entry)
        if text.strip():
            self.conn.execute(
                "INSERT INTO journal_fts (rowid, text) VALUES (?, ?)", (row, index_text(text))
            )

    def _set_entry(self, row: int, entry: dict[str, Any]) -> None:
        self.conn.execute("UPDATE journal SET entry = ? WHERE id = ?", (dumps(entry), row))

    def _close_run(self, tid: str) -> None:
        run = self.runs.pop(tid, None)
        if run is None:
            return
        self.conn.execute(
            "UPDATE journal SET entry = ?, open = 0 WHERE id = ?", (dumps(run.entry()), run.row)
        )
        self._index(run.row, run.entry())

    def _discard_step(self, tid: str) -> None:
        self.runs.pop(tid, None)
        mark = self.marks.pop(tid, None)
        if mark is None:
            return
        # What the attempt streamed and the failures of its tool calls; a background
        # subagent's report or a note that arrived meanwhile stays, as it does in the panel.
        kinds = (*ATTEMPT_KINDS, "tool_call_update")
        streamed = (
            "SELECT id FROM journal WHERE turn_id = ? AND id >= ? AND "
            f"json_extract(entry, '$.kind') IN ({', '.join('?' * len(kinds))})"
        )
        args = (tid, mark, *kinds)
        self.conn.execute(f"DELETE FROM journal_fts WHERE rowid IN ({streamed})", args)
        self.conn.execute(f"DELETE FROM journal WHERE id IN ({streamed})", args)

    def _unfinished_calls(self, tid: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT json_extract(entry, '$.kind'), json_extract(entry, '$.toolCallId') "
            "FROM journal WHERE turn_id = ? ORDER BY id",
            (tid,),
        ).fetchall()
        calls = [c for kind, c in rows if kind == "tool_call"]
        done = {c for kind, c in rows if kind == "tool_call_update"}
        return [c for c in calls if c not in done]

    # -- state and transcript ------------------------------------------------------------------

    def _save_snapshot(self, sid: str, tid: str, snapshot: dict[str, Any]) -> None:
        """`snapshot["history"]` holds only the messages from `snapshot["historyStart"]` on."""
        start = int(snapshot.get("historyStart", 0))
        history = snapshot.get("history", [])
        self.conn.executemany(
            "INSERT OR REPLACE INTO transcript (session_id, idx, turn_id, message) "
            "VALUES (?, ?, ?, ?)",
            [(sid, start + i, tid, dumps(m)) for i, m in enumerate(history)],
        )
        state = {k: v for k, v in snapshot.items() if k not in ("history", "historyStart")}
        state["transcriptLength"] = start + len(history)
        self.conn.execute(
            "UPDATE sessions SET state = json_patch(state, ?) WHERE id = ?", (dumps(state), sid)
        )


def chunk_updates(turn_id: str, last: int, ts: float, row: dict[str, Any]) -> list[dict]:
    """The `update` rows a `chunks` trace row stands for (`ChunkRow`)."""
    texts, at, base = row["texts"], row["at"], row["update"]
    first = last - len(texts) + 1
    return [
        {
            "turnId": turn_id,
            "seq": first + i,
            "ts": ts + offset / 1_000_000,
            "kind": "update",
            "data": {**base, "text": text},
        }
        for i, (text, offset) in enumerate(zip(texts, at, strict=True))
    ]

"""The session store: SQLite under the data dir (`AGENTLS_HOME` or the platform's).

Writes never wait on the disk: they go on a queue that one writer thread drains, a batch per
transaction (sqlite3 calls block, so an event-loop task would stall the event stream during
commits). `flush()` waits until everything queued so far is committed; the session service
calls it at every terminal. Reads use their own connection (WAL lets them run beside writes).

At open, turns left `running` by a server process that no longer exists are closed as
`aborted`: a crash loses at most the unfinished tail of the turn it interrupted.

    store = Store.open_default()
    store.create_session(...); store.begin_turn(...); store.record_update(...)
    await store.flush()
    store.list_sessions(cwd, cursor, 50); store.search("login test", 20)
    store.close()
"""

from __future__ import annotations

import base64
import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from protocol.updates import AgentMessageChunk, AgentThoughtChunk
from server.redact import redact, redact_data
from server.sessions import schema, search
from server.sessions.procs import pid_alive
from server.sessions.writer import Writer, chunk_updates

log = logging.getLogger(__name__)

DB_NAME = "sessions.db"
_OPEN_OWNERS: set[str] = set()
"""Owner tokens of the stores open in this process."""
BATCH = 5000
LINGER = 0.005
"""Seconds the writer waits for more writes after the first of a batch. A streamed reply's
deltas come one at a time; a transaction each (each rewriting the growing journal entry) cost
the writer thread more than the rest of a delta's path. A flush or a stop ends the wait."""
TITLE_CHARS = 80
CHUNKS = (AgentMessageChunk, AgentThoughtChunk)


class StoreError(Exception):
    """A request the store cannot serve (e.g. a malformed cursor)."""


@dataclass
class SessionRecord:
    id: str
    cwd: str
    engine: str
    title: str
    created_at: float
    updated_at: float
    state: dict[str, Any]


@dataclass
class TurnRecord:
    id: str
    session_id: str
    status: str
    stop_reason: str | None
    error: str | None
    prompt: str
    started_at: float
    ended_at: float | None


@dataclass
class JournalEntry:
    turn_id: str
    ts: float
    role: str
    update: dict[str, Any]
    seq: int | None = None
    """The seq it was sent with (None: written by an older version, or never sent)."""


def derive_title(prompt: str) -> str:
    """The first non-empty line of the first prompt, whitespace collapsed, at most 80 chars."""
    line = next((ln for ln in prompt.splitlines() if ln.strip()), "")
    title = " ".join(line.split())
    if len(title) <= TITLE_CHARS:
        return title
    cut = title[: TITLE_CHARS - 1].rsplit(" ", 1)[0] or title[: TITLE_CHARS - 1]
    return cut + "…"


class Store:
    """Sessions, journal, transcript and trace in one SQLite file; see the module docstring."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.owner = f"{os.getpid()}:{uuid.uuid4().hex[:8]}"
        _OPEN_OWNERS.add(self.owner)
        conn = schema.open_database(path)
        self._writer = Writer(conn)
        self.recovered = self._recover()
        self._reader = schema.connect(path)
        self._read_lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self._urgent = threading.Event()
        """Set with a flush or a stop: the writer stops waiting for more writes."""
        self._closed = False
        self._pending: list[tuple] = []
        self.error: str | None = None
        """Why the store cannot write, while `pending` writes wait."""
        self._thread = threading.Thread(target=self._loop, name="agentls-store", daemon=True)
        self._thread.start()

    @classmethod
    def open_default(cls, environ: Mapping[str, str] | None = None) -> Store:
        """The store of the data dir `environ` names (`AGENTLS_HOME`; None: this process's)."""
        from server.logs import data_dir

        return cls(data_dir(environ) / DB_NAME)

    # -- writes (queued; they never block the caller) ---------------------------------------

    def create_session(self, sid: str, cwd: str, engine: str, state: dict[str, Any]) -> None:
        self._put("session", sid, cwd, engine, state, time.time())

    def begin_turn(
        self,
        sid: str,
        tid: str,
        prompt: str,
        trace: dict[str, Any],
        *,
        seq: int | None = None,
        origin: str | None = None,
    ) -> None:
        """A turn starts: its row (`running`), the prompt in the journal (with `seq`), the title
        if none. `origin: report`: the prompt is background subagents' reports (no title)."""
        now = time.time()
        title = derive_title(prompt) if origin is None else ""
        self._put("turn", sid, tid, prompt, title, self.owner, now, seq, origin)
        self._put("trace", sid, tid, None, now, "prompt", trace)

    def record_update(self, sid: str, tid: str, seq: int, update: Any) -> None:
        """A `session/update` as sent (a wire model or its dict); serialized by the writer."""
        self._put("update", sid, tid, seq, time.time(), update)

    def record_trace(self, sid: str, tid: str | None, kind: str, data: Any) -> None:
        self._put("trace", sid, tid, None, time.time(), kind, data)

    def end_turn(
        self, sid: str, tid: str, result: dict[str, Any], snapshot: dict[str, Any] | None
    ) -> None:
        """The terminal. `snapshot` (engine state, with `history` holding the messages from
        `historyStart` on) replaces the session's state and extends its transcript."""
        self._put("end", sid, tid, time.time(), result, snapshot)

    def save_step(self, sid: str, tid: str, snapshot: dict[str, Any]) -> None:
        """A finished step of a running turn: `snapshot` as for `end_turn`."""
        self._put("step", sid, tid, snapshot)

    def patch_state(self, sid: str, patch: dict[str, Any]) -> None:
        self._put("state", sid, patch)

    def flush_sync(self, timeout: float = 30.0) -> bool:
        if self._closed:
            return True
        done = threading.Event()
        self._queue.put(("flush", done))
        self._urgent.set()
        return done.wait(timeout)

    async def flush(self) -> None:
        await anyio.to_thread.run_sync(self.flush_sync)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _OPEN_OWNERS.discard(self.owner)
        self._queue.put(("stop", None))
        self._urgent.set()
        self._thread.join(60)
        with self._read_lock:
            self._reader.close()

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self.close)

    def _put(self, *op: Any) -> None:
        if self._closed:
            log.debug("store closed; dropped %s", op[0])
            return
        self._queue.put(op)

    def _batch(self) -> list[tuple]:
        # One wait for the whole linger, not a wake-up per write: at 20,000 writes a second
        # each wake-up took the GIL from the event stream the writes come from.
        ops = [self._queue.get()]
        if ops[0][0] not in ("flush", "stop"):
            self._urgent.wait(LINGER)
        self._urgent.clear()
        while len(ops) < BATCH and ops[-1][0] not in ("flush", "stop"):
            try:
                ops.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return ops

    def _loop(self) -> None:
        while True:
            ops = self._batch()
            signals = [op for op in ops if op[0] in ("flush", "stop")]
            writes = [scrubbed(op) for op in ops if op[0] not in ("flush", "stop")]
            if writes or self._pending:
                self._apply(writes)
            for op in signals:
                if op[1] is not None:
                    op[1].set()
            if any(op[0] == "stop" for op in signals):
                self._writer.conn.close()
                return

    def _apply(self, ops: list[tuple]) -> None:
        # Persistence must never take the event stream down. A store that cannot write (a full
        # disk) keeps the batch and retries it before the next one; any other failing batch is
        # retried one operation at a time, and what still fails is logged and dropped.
        ops = self._pending + ops
        try:
            self._writer.apply(ops)
        except Exception as exc:
            if unwritable(exc):
                if not self._pending:
                    log.warning("session store: cannot write (%s); keeping writes in memory", exc)
                self._pending, self.error = ops, str(exc)
                return
            log.exception("session store: a batch of %d writes failed", len(ops))
        else:
            if self._pending:
                log.warning("session store: wrote %d pending writes", len(self._pending))
            self._pending, self.error = [], None
            return
        self._pending, self.error = [], None
        lost = 0
        for op in ops if len(ops) > 1 else []:
            try:
                self._writer.apply([op])
            except Exception as exc:
                lost += 1
                log.debug("session store: dropped %s: %s", op[0], exc)
        if lost:
            log.warning("session store: dropped %d writes", lost)

    @property
    def pending(self) -> int:
        """Writes the database refused for want of space, kept to be retried."""
        return len(self._pending)

    def _recover(self) -> list[str]:
        rows = self._writer.conn.execute(
            "SELECT id, session_id, owner FROM turns WHERE status = 'running'"
        ).fetchall()
        dead = [(tid, sid) for tid, sid, owner in rows if not self._owner_alive(owner)]
        if dead:
            now = time.time()
            self._writer.apply([("abort", sid, tid, now) for tid, sid in dead])
            log.warning("marked %d interrupted turn(s) as aborted", len(dead))
        return [tid for tid, _ in dead]

    @staticmethod
    def _owner_alive(owner: str) -> bool:
        pid = int(owner.split(":", 1)[0] or 0)
        if pid == os.getpid():  # ours, or a previous process that had the same pid
            return owner in _OPEN_OWNERS
        return pid_alive(pid)

    # -- reads -------------------------------------------------------------------------------

    def _read(self, sql: str, args: tuple = ()) -> list[Any]:
        with self._read_lock:
            return self._reader.execute(sql, args).fetchall()

    def session(self, sid: str) -> SessionRecord | None:
        rows = self._read(
            "SELECT id, cwd, engine, title, created_at, updated_at, state FROM sessions "
            "WHERE id = ?",
            (sid,),
        )
        return _session(rows[0]) if rows else None

    def session_of(self, ident: str) -> tuple[str | None, str | None]:
        """(session id, turn id) for a session id or a turn id; (None, None) if neither."""
        if self._read("SELECT 1 FROM sessions WHERE id = ?", (ident,)):
            return ident, None
        rows = self._read("SELECT session_id FROM turns WHERE id = ?", (ident,))
        return (rows[0][0], ident) if rows else (None, None)

    def transcript(self, sid: str, upto: int | None = None) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT message FROM transcript WHERE session_id = ? AND idx < ? ORDER BY idx",
            (sid, (1 << 62) if upto is None else upto),
        )
        return [json.loads(m) for (m,) in rows]

    def journal(self, sid: str) -> list[JournalEntry]:
        rows = self._read(
            "SELECT turn_id, ts, role, entry, seq FROM journal WHERE session_id = ? ORDER BY id",
            (sid,),
        )
        return [JournalEntry(t, ts, role, json.loads(e), seq) for t, ts, role, e, seq in rows]

    def last_seq(self, sid: str) -> int:
        """The highest seq the session's events were sent or stored with."""
        journal = self._read("SELECT MAX(seq) FROM journal WHERE session_id = ?", (sid,))
        trace = self._read(
            "SELECT MAX(r.seq) FROM turns t JOIN trace r ON r.turn = t.n WHERE t.session_id = ?",
            (sid,),
        )
        return max(journal[0][0] or 0, trace[0][0] or 0)

    def turns(self, sid: str) -> list[TurnRecord]:
        rows = self._read(
            "SELECT id, session_id, status, stop_reason, error, prompt, started_at, ended_at "
            "FROM turns WHERE session_id = ? ORDER BY n",
            (sid,),
        )
        return [TurnRecord(*row) for row in rows]

    def trace(self, sid: str) -> list[dict[str, Any]]:
        """The session's trace rows in order; a `chunks` row comes back as its updates."""
        rows = self._read(
            "SELECT t.id, r.seq, r.ts, r.kind, r.data FROM turns t JOIN trace r ON r.turn = t.n "
            "WHERE t.session_id = ? ORDER BY r.id",
            (sid,),
        )
        out: list[dict[str, Any]] = []
        for t, seq, ts, kind, data in rows:
            value = json.loads(data)
            if kind == "chunks":
                out += chunk_updates(t, seq, ts, value)
            else:
                out.append({"turnId": t, "seq": seq, "ts": ts, "kind": kind, "data": value})
        return out

    def list_sessions(
        self, cwd: str | None, cursor: str | None, limit: int, *, open_ids: Iterable[str] = ()
    ) -> tuple[list[SessionRecord], str | None]:
        """Sessions that ran at least one turn, and the `open_ids` even before their first,
        newest first; keyset pagination."""
        live = list(open_ids)
        marks = ", ".join("?" * len(live))
        where = [f"(title != '' OR id IN ({marks}))" if live else "title != ''"]
        args = list[Any](live)
        if cwd is not None:
            where.append("cwd = ?")
            args.append(cwd)
        if cursor:
            where.append("(updated_at, id) < (?, ?)")
            args.extend(decode_cursor(cursor))
        rows = self._read(
            "SELECT id, cwd, engine, title, created_at, updated_at, state FROM sessions "
            f"WHERE {' AND '.join(where)} ORDER BY updated_at DESC, id DESC LIMIT ?",
            (*args, limit + 1),
        )
        page = [_session(r) for r in rows[:limit]]
        more = len(rows) > limit and page
        return page, encode_cursor(page[-1]) if more else None

    def search(self, query: str, limit: int, *, exclude: str | None = None) -> list[search.Hit]:
        with self._read_lock:
            return search.search(self._reader, query, limit, exclude=exclude)

    def integrity(self) -> str:
        return self._read("PRAGMA integrity_check")[0][0]


def scrubbed(op: tuple) -> tuple:
    """The one redaction hook of the store: keys, auth headers and URL credentials never reach
    the file (`server.redact`); wire models are written as their wire dicts."""
    name, *args = op
    if name == "update" and isinstance(args[-1], CHUNKS):
        # Most of a stream: its text is all there is to mask, without encoding it as JSON.
        chunk = args[-1]
        return (name, *args[:-1], {"kind": chunk.kind, "text": redact(chunk.text)})
    return (name, *redact_data([a.to_wire() if hasattr(a, "to_wire") else a for a in args]))


def unwritable(exc: Exception) -> bool:
    """Whether a write failed for want of space or a writable disk, so it may work later."""
    if isinstance(exc, OSError):
        return True
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_BUSY", "SQLITE_LOCKED"))


def _session(row: Any) -> SessionRecord:
    sid, cwd, engine, title, created, updated, state = row
    return SessionRecord(sid, cwd, engine, title, created, updated, json.loads(state))


def encode_cursor(record: SessionRecord) -> str:
    raw = f"{record.updated_at!r}|{record.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, sid = raw.split("|", 1)
        return float(stamp), sid
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoreError(f"malformed cursor {cursor!r}; pass a nextCursor unchanged") from exc

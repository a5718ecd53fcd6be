"""`session/rewind`: undo a turn and every later one. The files those turns changed through the
file tools go back to what they held before (`server.tools.checkpoints`), refusing with the list
when one changed outside agentls since; with `conversation`, a new session (a branch) holds the
conversation before the turn, and the original stays as it was."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path

import anyio

from protocol import errors
from protocol.methods import RewindParams, RewindResult
from server.logs import data_dir
from server.policy.confined import Escaped
from server.sessions import schema
from server.sessions.errors import ServiceError
from server.sessions.model import Session
from server.sessions.store import Store
from server.tools.checkpoint_store import Checkpoints, Plan, copy_log


def checkpoints_of(
    session_id: str, store: Store | None, environ: dict[str, str] | None
) -> Checkpoints:
    """The session's checkpoints, where the native engine keeps them: beside the store."""
    home = store.path.parent if store is not None else data_dir(environ)
    return Checkpoints(home / "checkpoints", session_id)


async def rewind(
    session: Session, params: RewindParams, store: Store | None, environ: dict[str, str] | None
) -> RewindResult:
    if session.turn is not None:
        raise ServiceError(errors.SESSION_BUSY, f"session {session.id} is running a turn")
    if store is not None:
        await store.flush()
        turns = [t.id for t in await anyio.to_thread.run_sync(store.turns, session.id)]
    else:
        turns = list(session.turn_ids)
    if params.turn_id not in turns:
        raise ServiceError(
            errors.REWIND_REFUSED, f"{params.turn_id!r} is not a turn of session {session.id}"
        )
    later = turns[turns.index(params.turn_id) :]
    checkpoints = checkpoints_of(session.id, store, environ)
    plan = (
        await anyio.to_thread.run_sync(checkpoints.plan, later)
        if params.files
        else Plan({}, [], len(checkpoints.changes()))
    )
    result = RewindResult(restored=plan.restored, removed=plan.removed, conflicts=plan.conflicts)
    if params.dry_run:
        return result
    if plan.conflicts:
        raise ServiceError(
            errors.REWIND_REFUSED,
            "nothing was rewound: changed outside agentls since it wrote them: "
            + ", ".join(plan.conflicts),
            data={"conflicts": plan.conflicts},
        )
    branch = None
    if params.conversation:
        if store is None:
            raise ServiceError(
                errors.REWIND_REFUSED, "the conversation can be rewound only with a session store"
            )
        branch = await anyio.to_thread.run_sync(
            lambda: branch_session(store.path, session.id, turns[: len(turns) - len(later)], later)
        )
    if params.files:
        try:
            await anyio.to_thread.run_sync(checkpoints.apply, plan)
        except Escaped as exc:
            raise ServiceError(
                errors.REWIND_REFUSED,
                f"stopped: a folder on the way is now a symlink ({exc.strerror}); files before "
                "it were restored, the turn stays in the log",
            ) from None
    if branch is not None:
        new_id, renamed = branch
        target = checkpoints_of(new_id, store, environ)
        await anyio.to_thread.run_sync(copy_log, checkpoints, target, renamed)
        result.session_id = new_id
    result.conflicts = []
    return result


def branch_session(
    path: Path, session_id: str, kept: list[str], undone: list[str]
) -> tuple[str, dict[str, str]]:
    """Copy the session as it was before `undone[0]`: its row, the `kept` turns (new ids), their
    journal (indexed for search) and the transcript the model had then. Returns the new id and
    the turn ids' mapping."""
    conn = schema.connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            made = _branch(conn, session_id, kept, undone)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()
    return made


def _branch(
    conn: sqlite3.Connection, session_id: str, kept: list[str], undone: list[str]
) -> tuple[str, dict[str, str]]:
    cwd, engine, title, state = conn.execute(
        "SELECT cwd, engine, title, state FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    length = history_before(conn, session_id, undone)
    new_id = f"sess_{uuid.uuid4().hex[:16]}"
    now = time.time()
    state = {**json.loads(state), "transcriptLength": length}
    state["branchOf"] = {"sessionId": session_id, "turnId": undone[0]}
    conn.execute(
        "INSERT INTO sessions (id, cwd, engine, title, created_at, updated_at, state) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (new_id, cwd, engine, f"{title} (branch)" if title else "", now, now, json.dumps(state)),
    )
    renamed = {tid: f"turn_{uuid.uuid4().hex[:12]}" for tid in kept}
    for tid, new_tid in renamed.items():
        conn.execute(
            "INSERT INTO turns (id, session_id, status, stop_reason, error, prompt, usage, owner, "
            "started_at, ended_at) SELECT ?, ?, status, stop_reason, error, prompt, usage, owner, "
            "started_at, ended_at FROM turns WHERE id = ?",
            (new_tid, new_id, tid),
        )
        rows = conn.execute(
            "SELECT j.ts, j.role, j.entry, j.open, j.seq, f.text FROM journal j "
            "LEFT JOIN journal_fts f ON f.rowid = j.id WHERE j.turn_id = ? ORDER BY j.id",
            (tid,),
        ).fetchall()
        for ts, role, entry, is_open, seq, text in rows:
            cursor = conn.execute(
                "INSERT INTO journal (session_id, turn_id, ts, role, entry, open, seq) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (new_id, new_tid, ts, role, entry, is_open, seq),
            )
            if text is not None:
                conn.execute(
                    "INSERT INTO journal_fts (rowid, text) VALUES (?, ?)", (cursor.lastrowid, text)
                )
    conn.execute(
        "INSERT INTO transcript (session_id, idx, turn_id, message) "
        "SELECT ?, idx, turn_id, message FROM transcript WHERE session_id = ? AND idx < ?",
        (new_id, session_id, length),
    )
    for old, new in renamed.items():
        conn.execute(
            "UPDATE transcript SET turn_id = ? WHERE session_id = ? AND turn_id = ?",
            (new, new_id, old),
        )
    return new_id, renamed


def history_before(conn: sqlite3.Connection, session_id: str, undone: list[str]) -> int:
    """How many transcript messages the model had when `undone[0]` started (its prompt trace);
    refused when a later turn rewrote those messages (a compaction)."""
    row = conn.execute(
        "SELECT r.data FROM trace r JOIN turns t ON r.turn = t.n "
        "WHERE t.id = ? AND r.kind = 'prompt' ORDER BY r.id LIMIT 1",
        (undone[0],),
    ).fetchone()
    length = int(json.loads(row[0]).get("historyLength", 0)) if row else None
    marks = ", ".join("?" * len(undone))
    rewritten = conn.execute(
        f"SELECT MIN(idx) FROM transcript WHERE session_id = ? AND turn_id IN ({marks})",
        (session_id, *undone),
    ).fetchone()[0]
    if length is None or (rewritten is not None and rewritten < length):
        raise ServiceError(
            errors.REWIND_REFUSED,
            "the conversation before this turn is no longer stored as it was (a later turn "
            "compacted it); rewind the files only",
        )
    return length

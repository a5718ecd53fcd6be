"""The session database's schema and its migrations.

`PRAGMA user_version` is the schema version: migration N (1-based) takes the database from
version N-1 to N. Migrations run in one `BEGIN IMMEDIATE` transaction, so two processes opening
the same new database do not both migrate it.

Four layers, kept apart:

- `journal` — what the user saw (prompts, merged answer text, tool cards, plans, turn ends),
  replayed by `session/load`; `journal_fts` indexes its text (rowid = journal id).
- `sessions.state` — what resume needs (engine, provider, model, mode, rules, todos, and
  `transcriptLength`, the number of valid `transcript` rows).
- `transcript` — the normalized messages the model got, thinking signatures included.
- `trace` — every event and interaction with its time, every provider request and response,
  each turn's prompt and terminal.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

# U+2063 INVISIBLE SEPARATOR is put around CJK characters before indexing (see search.py), so
# the tokenizer must split on it.
FTS_TOKENIZER = "unicode61 remove_diacritics 2 separators '\u2063'"

V1 = [
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        cwd TEXT NOT NULL,
        engine TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        state TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX sessions_by_time ON sessions(updated_at DESC, id DESC)",
    "CREATE INDEX sessions_by_cwd ON sessions(cwd, updated_at DESC, id DESC)",
    """CREATE TABLE turns (
        n INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        status TEXT NOT NULL
            CHECK (status IN ('running', 'completed', 'aborted', 'failed', 'timed_out')),
        stop_reason TEXT,
        error TEXT,
        prompt TEXT NOT NULL,
        usage TEXT,
        owner TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL
    )""",
    "CREATE INDEX turns_by_session ON turns(session_id, started_at)",
    "CREATE INDEX turns_running ON turns(status) WHERE status = 'running'",
    """CREATE TABLE journal (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        ts REAL NOT NULL,
        role TEXT NOT NULL,
        entry TEXT NOT NULL,
        open INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX journal_by_session ON journal(session_id, id)",
    "CREATE INDEX journal_open ON journal(turn_id) WHERE open = 1",
    f'CREATE VIRTUAL TABLE journal_fts USING fts5(text, tokenize = "{FTS_TOKENIZER}")',
    """CREATE TABLE transcript (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        turn_id TEXT,
        message TEXT NOT NULL,
        PRIMARY KEY (session_id, idx)
    ) WITHOUT ROWID""",
    # `turn` is turns.n: trace rows are the bulk of the file, so they carry no text ids.
    """CREATE TABLE trace (
        id INTEGER PRIMARY KEY,
        turn INTEGER NOT NULL REFERENCES turns(n) ON DELETE CASCADE,
        seq INTEGER,
        ts REAL NOT NULL,
        kind TEXT NOT NULL,
        data TEXT NOT NULL
    )""",
    "CREATE INDEX trace_by_turn ON trace(turn, id)",
]

V2 = [
    # the seq each journal entry was sent with, so `session/load` replays it unchanged
    "ALTER TABLE journal ADD COLUMN seq INTEGER",
]

MIGRATIONS: list[list[str]] = [V1, V2]
VERSION = len(MIGRATIONS)


class SchemaError(Exception):
    """The database cannot be used by this version of agentls."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, foreign keys on."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA journal_mode = WAL")
    # NORMAL under WAL: a crash of the process loses nothing committed; only a power loss can
    # lose the last transactions, never corrupt the file.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the database to `VERSION`; returns the version it had before."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        before = conn.execute("PRAGMA user_version").fetchone()[0]
        if before > VERSION:
            raise SchemaError(
                f"the session database has schema version {before}, newer than this agentls "
                f"understands ({VERSION}); upgrade agentls or set AGENTLS_HOME elsewhere"
            )
        for statements in MIGRATIONS[before:]:
            for sql in statements:
                conn.execute(sql)
        conn.execute(f"PRAGMA user_version = {VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return before


def open_database(path: Path) -> sqlite3.Connection:
    """A migrated connection to `path`. A database whose tables do not match its version (left
    by an unreleased build, or edited by hand) is moved aside, never deleted, and a new one is
    started, so sessions keep being recorded."""
    conn = connect(path)
    migrate(conn)
    problem = mismatch(conn)
    if problem is None:
        return conn
    conn.close()
    aside = set_aside(path)
    log.warning(
        "the session database %s does not match schema version %d (%s); moved it to %s and "
        "started a new one",
        path,
        VERSION,
        problem,
        aside,
    )
    conn = connect(path)
    migrate(conn)
    return conn


@cache
def expected_columns() -> dict[str, tuple[str, ...]]:
    conn = sqlite3.connect(":memory:")
    for statements in MIGRATIONS:
        for sql in statements:
            conn.execute(sql)
    return _columns(conn)


def _columns(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        name: tuple(r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')) for name in names
    }


def mismatch(conn: sqlite3.Connection) -> str | None:
    """What differs from the tables the migrations make, or None."""
    have = _columns(conn)
    for table, columns in expected_columns().items():
        if table not in have:
            return f"table {table} is missing"
        if have[table] != columns:
            return f"table {table} has columns {', '.join(have[table])}"
    return None


def set_aside(path: Path) -> Path:
    """Rename the database (and its WAL files) to `<name>.incompatible-<time>`."""
    aside = path.with_name(f"{path.name}.incompatible-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(aside.with_name(aside.name + suffix))
    return aside

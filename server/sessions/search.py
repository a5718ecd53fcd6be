"""Full-text search over the journal: what gets indexed, and how a query runs.

The `unicode61` tokenizer keeps a run of CJK characters as one token (those scripts put no
spaces between words), so a search for a word inside a Chinese sentence would never match.
Each CJK character is therefore fenced with U+2063 (a separator to the tokenizer, see
schema.py), in the indexed text and in the query alike: a CJK word becomes a phrase of
single-character tokens. Snippets drop the fences again.

A query is tried as FTS5 syntax first; on a syntax error as one quoted phrase; then no hits.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Any, assert_never, cast

from protocol.updates import UPDATE_KINDS, UpdateKind

FENCE = "\u2063"
MARK = "**"
_CJK = re.compile(
    "([\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0002ebef])"
)

SEARCH_SQL = f"""
SELECT j.session_id, j.turn_id, j.role, j.ts, s.title,
       snippet(journal_fts, 0, '{MARK}', '{MARK}', '…', 16)
FROM journal_fts
JOIN journal j ON j.id = journal_fts.rowid
JOIN sessions s ON s.id = j.session_id
WHERE journal_fts MATCH ? AND j.session_id != ?
ORDER BY rank
LIMIT ?
"""


@dataclass
class Hit:
    """A journal entry matching a search."""

    session_id: str
    turn_id: str
    role: str
    ts: float
    title: str
    snippet: str


def index_text(text: str) -> str:
    """The text as indexed (and as a query is rewritten): CJK characters fenced."""
    return _CJK.sub(FENCE + r"\1" + FENCE, text.replace(FENCE, ""))


def clean_snippet(snippet: str) -> str:
    return snippet.replace(FENCE, "").replace(MARK + MARK, "")


def phrase(query: str) -> str:
    return '"' + query.replace('"', '""') + '"'


def search(
    conn: sqlite3.Connection, query: str, limit: int, *, exclude: str | None = None
) -> list[Hit]:
    """Best matches first; hits of session `exclude` left out."""
    if not query.strip():
        return []
    for candidate in (query, phrase(query)):
        try:
            args = (index_text(candidate), exclude or "", limit)
            rows = conn.execute(SEARCH_SQL, args).fetchall()
        except sqlite3.OperationalError:
            continue  # FTS5 syntax ("no such column", "syntax error near ..."): try the phrase
        return [_hit(row) for row in rows]
    return []


def _hit(row: Any) -> Hit:
    session_id, turn_id, role, ts, title, snippet = row
    return Hit(session_id, turn_id, role, ts, title, clean_snippet(snippet))


def entry_text(update: dict[str, Any]) -> str:
    """The searchable text of a journal entry ('' for entries without any)."""
    kind = update.get("kind")
    if kind not in UPDATE_KINDS:
        return ""
    match cast(UpdateKind, kind):
        case "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk":
            return update.get("text", "")
        case "tool_call":
            return update.get("title", "")
        case "plan":
            return "\n".join(e.get("content", "") for e in update.get("entries", []))
        case "question":
            return "\n".join(q.get("question", "") for q in update.get("questions", []))
        case "subagent":
            return update.get("summary") or ""
        case (
            "tool_call_update"
            | "step_finish"
            | "permission"
            | "model_switched"
            | "mode_changed"
            | "compaction"
            | "stream_retry"
            | "mcp_status"
            | "workspace_trust"
            | "store_warning"
            | "checkpoint"
            | "turn_end"
        ):
            return ""
        case unknown:
            assert_never(unknown)

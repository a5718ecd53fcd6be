"""search_sessions: full-text search over the user's stored sessions of this workspace; with
`allWorkspaces`, over every workspace's, which asks the user first (one repository's text must
not pull another project's conversations into the model unnoticed).

Offered only when the server stores sessions: the session service passes its store's search in
the session's `SessionSpec`.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from pydantic import Field

from server.timestamps import iso
from server.turn import SessionSearch

from .base import Tool, ToolContext, ToolInput


class SearchSessionsInput(ToolInput):
    query: str = Field(
        description='Words to find (all must match), "an exact phrase", prefix*, OR, NOT.'
    )
    limit: int = Field(10, ge=1, le=50, description="Most hits to return.")
    allWorkspaces: bool = Field(
        False, description="Also search sessions of other workspaces (asks the user first)."
    )


# Hits of other workspaces are dropped after the search: look this many times further.
SCOPE_FACTOR = 10


class SearchSessions(Tool):
    """Searches what earlier sessions showed the user: prompts, answers, tool cards, plans."""

    name = "search_sessions"
    description = (
        "Search the user's other agent sessions in this workspace (prompts, your answers, tool "
        "call titles, plans); allWorkspaces: true searches every workspace and needs the user's "
        "approval. Use it when the user refers to past work ('what did we "
        "decide about X', 'the fix from last week'). Returns the best matches first, each with "
        "sessionId, title, role (user, assistant, thinking, tool, plan), timestamp and a "
        "snippet with the matched words in **bold**; an empty list when nothing matches."
    )
    Input = SearchSessionsInput
    read_only = True
    kind = "search"

    def __init__(self, store: SessionSearch):
        self.store = store

    def title(self, args: SearchSessionsInput) -> str:
        where = " in every workspace" if args.allWorkspaces else ""
        return f"Search sessions for {args.query!r}{where}"

    def always_ask(self, args: SearchSessionsInput) -> str | None:
        if args.allWorkspaces:
            return "searching other workspaces' sessions shows their conversations to the model"
        return None

    async def run(self, ctx: ToolContext, args: SearchSessionsInput) -> dict:
        await self.store.flush()
        hits = await anyio.to_thread.run_sync(lambda: self._search(ctx, args))
        return {
            "hits": [
                {
                    "sessionId": h.session_id,
                    "title": h.title,
                    "role": h.role,
                    "timestamp": iso(h.ts),
                    "snippet": h.snippet,
                }
                for h in hits
            ]
        }

    def _search(self, ctx: ToolContext, args: SearchSessionsInput) -> list:
        exclude = ctx.session_id or None
        if args.allWorkspaces:
            return self.store.search(args.query, args.limit, exclude=exclude)
        wanted = min(args.limit * SCOPE_FACTOR, 500)
        here, cwds = _real(str(ctx.cwd)), {}
        kept = []
        for hit in self.store.search(args.query, wanted, exclude=exclude):
            if hit.session_id not in cwds:
                record = self.store.session(hit.session_id)
                cwds[hit.session_id] = _real(record.cwd) if record else None
            if cwds[hit.session_id] == here:
                kept.append(hit)
        return kept[: args.limit]


def _real(path: str) -> Path | None:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return None


def session_tools(search: SessionSearch | None) -> list[Tool]:
    return [SearchSessions(search)] if search is not None else []

"""search_sessions: full-text search over the user's stored sessions (all workspaces).

Offered only when the server stores sessions: the registry asks `session_tools()`, which finds
the store of the session service creating the session.
"""

from __future__ import annotations

import anyio
from pydantic import Field

from server.sessions.store import Store, iso

from .base import Tool, ToolContext, ToolInput


class SearchSessionsInput(ToolInput):
    query: str = Field(
        description='Words to find (all must match), "an exact phrase", prefix*, OR, NOT.'
    )
    limit: int = Field(10, ge=1, le=50, description="Most hits to return.")


class SearchSessions(Tool):
    """Searches what earlier sessions showed the user: prompts, answers, tool cards, plans."""

    name = "search_sessions"
    description = (
        "Search the user's other agent sessions (prompts, your answers, tool call titles, "
        "plans) across all workspaces. Use it when the user refers to past work ('what did we "
        "decide about X', 'the fix from last week'). Returns the best matches first, each with "
        "sessionId, title, role (user, assistant, thinking, tool, plan), timestamp and a "
        "snippet with the matched words in **bold**; an empty list when nothing matches."
    )
    Input = SearchSessionsInput
    read_only = True
    kind = "search"

    def __init__(self, store: Store):
        self.store = store

    def title(self, args: SearchSessionsInput) -> str:
        return f"Search sessions for {args.query!r}"

    async def run(self, ctx: ToolContext, args: SearchSessionsInput) -> dict:
        await self.store.flush()
        hits = await anyio.to_thread.run_sync(
            lambda: self.store.search(args.query, args.limit, exclude=ctx.session_id or None)
        )
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


def session_tools() -> list[Tool]:
    from server.sessions.recording import current_store

    store = current_store()
    return [SearchSessions(store)] if store is not None else []

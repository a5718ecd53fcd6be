"""A native session as JSON-able data (what resuming it needs), and back."""

from __future__ import annotations

from typing import Any

from server.agent import pairing
from server.agent.delegation import interrupted_note
from server.agent.state import AgentSession
from server.providers.codec import message_from_dict, message_to_dict
from server.providers.messages import Message, TextPart
from server.tools import todo

SNAPSHOT_VERSION = 1


def native_snapshot(session: AgentSession, *, since: int = 0) -> dict[str, Any]:
    """What resuming a native session needs, JSON-able; the history from message `since` on
    (each step saves only its new messages: serializing all of them every step made a long
    turn quadratic)."""
    view = session.view
    unreported = session.background.unreported()
    return {
        "version": SNAPSHOT_VERSION,
        "provider": session.settings.provider,
        "model": session.settings.model,
        "mode": session.permissions.mode,
        "allowRules": sorted(session.permissions.allow_rules),
        "denyRules": sorted(session.permissions.deny_rules),
        "toolState": _jsonable(session.tool_ctx.state, skip=todo.unsaved(session.spec.config)),
        "view": {
            "summary": view.summary,
            "summarized": view.summarized,
            "elided": sorted(view.elided),
        },
        "history": [message_to_dict(m) for m in session.history[since:]],
        "historyLength": len(session.history),
    } | ({"background": unreported} if unreported else {})


def apply_native_snapshot(session: AgentSession, snapshot: dict[str, Any]) -> None:
    """Put a snapshot's history, permissions and tool state back into a fresh session. A tool
    call left without its result (by a turn interrupted before results were always written)
    is answered as interrupted, so the history is one every provider accepts."""
    session.history = [message_from_dict(m) for m in snapshot.get("history", [])]
    mended = pairing.mend(session.history, pairing.STORED)
    if snapshot.get("mode"):
        session.permissions.mode = snapshot["mode"]
    session.permissions.allow_rules = set(snapshot.get("allowRules", []))
    session.permissions.deny_rules = set(snapshot.get("denyRules", []))
    session.tool_ctx.state.update(snapshot.get("toolState") or {})
    view = snapshot.get("view") or {}
    session.view.summary = view.get("summary")
    session.view.summarized = int(view.get("summarized") or 0)
    for index in mended.inserted:  # a result joins its call's side of the summary boundary
        if index <= session.view.summarized:
            session.view.summarized += 1
    session.view.elided = set(view.get("elided") or [])
    note = interrupted_note(snapshot.get("background") or [])
    if note is not None:  # the server stopped before they reported
        session.history.append(Message("user", [TextPart(note)]))


def _jsonable(state: dict[str, Any], *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Tool state minus anything that is not plain JSON (live handles never resume) and the
    keys the config keeps out of storage."""
    return {k: v for k, v in state.items() if k not in skip and _is_plain(v)}


def _is_plain(value: Any) -> bool:
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False

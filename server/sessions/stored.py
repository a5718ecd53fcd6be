"""Stored sessions on the session service: `load`, `list`, `search` (mixed into
`SessionService`, which owns the store, the recorder and the in-memory sessions)."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import anyio

from protocol import errors
from protocol.methods import (
    ListSessionsResult,
    SearchHit,
    SearchSessionsResult,
    SessionInfoResult,
    SessionSummary,
)
from protocol.updates import UPDATE_ADAPTER, SessionUpdateKind, ToolCall, ToolCallUpdate, TurnEnd
from server.agent import pairing
from server.engines.base import EngineDriver, EngineError
from server.sessions.errors import ServiceError
from server.sessions.model import Session
from server.sessions.persist import EDITOR_TRUST, Recorder
from server.sessions.persist import snapshot as snapshot_of
from server.sessions.reports import ReportTurns
from server.sessions.setup import reopen, store_failure
from server.sessions.store import Store, StoreError
from server.timestamps import iso
from server.turn import SessionSpec


class ServiceParts(Protocol):
    """What reading the store needs of the session service."""

    sessions: dict[str, Session]
    store: Store | None
    recorder: Recorder | None
    environ: dict[str, str] | None
    _restoring: anyio.Lock
    reports: ReportTurns

    def describe(self, session: Session) -> SessionInfoResult: ...

    def _workspace(self, cwd: str) -> Path: ...

    def _config(
        self, cwd: Path, overrides: dict[str, Any], *, trusted: bool = False
    ) -> dict[str, Any]: ...

    def _engine(self, engine_id: str) -> EngineDriver: ...

    def _adopt(
        self, session_id: str, cwd: Path, config: dict[str, Any], engine: EngineDriver, handle: Any
    ) -> Session: ...

    def _deliver(
        self, session: Session, turn_id: str, update: SessionUpdateKind, *, seq: int | None = None
    ) -> int: ...

    async def open_snapshot(
        self, session_id: str, cwd: Path, engine_id: str, snapshot: dict[str, Any]
    ) -> Session: ...

    async def _restore(self, session_id: str) -> Session: ...


log = logging.getLogger(__name__)


class OpenCalls:
    """Tool calls a stored turn announced and never closed (written before every interrupted
    call was closed): replayed closed, just before their turn's terminal."""

    def __init__(self) -> None:
        self.open: dict[str, list[str]] = {}

    def see(self, turn_id: str, update: Any) -> list[ToolCallUpdate]:
        calls = self.open.setdefault(turn_id, [])
        if isinstance(update, ToolCall) and not update.parent_tool_call_id:
            calls.append(update.tool_call_id)
        elif isinstance(update, ToolCallUpdate) and update.tool_call_id in calls:
            calls.remove(update.tool_call_id)
        elif isinstance(update, TurnEnd):
            left, self.open[turn_id] = calls, []
            return [
                ToolCallUpdate(tool_call_id=c, status="failed", error=pairing.STORED) for c in left
            ]
        return []


def unchanged(stored: dict[str, Any], restored: dict[str, Any] | None) -> int:
    """How many messages of the stored history the restored session kept as they were."""
    before = stored.get("history", [])
    after = restored.get("history", before) if restored else before
    same = 0
    for old, new in zip(before, after, strict=False):
        if old != new:
            break
        same += 1
    return same


class StoredSessions:
    """The part of the session service that reads the store."""

    async def load(self: ServiceParts, session_id: str) -> SessionInfoResult:
        """Open a stored session (restoring it if it is not in memory), replay its journal to
        the client as `session/update` events, and describe it."""
        session = self.sessions.get(session_id) or await self._restore(session_id)
        if session.turn is not None:
            raise ServiceError(errors.SESSION_BUSY, f"session {session_id} is running a turn")
        if self.recorder:
            opened, last = OpenCalls(), 0
            for entry in await self.recorder.journal(session_id):
                try:
                    update = UPDATE_ADAPTER.validate_python(entry.update)
                except ValueError:
                    log.warning("skipped an unreadable journal entry of %s", session_id)
                    continue
                for closing in opened.see(entry.turn_id, update):
                    self._deliver(session, entry.turn_id, closing)
                fresh = entry.seq is None or entry.seq <= last
                last = self._deliver(
                    session, entry.turn_id, update, seq=None if fresh else entry.seq
                )
        return self.describe(session)

    async def open_snapshot(
        self: ServiceParts, session_id: str, cwd: Path, engine_id: str, snapshot: dict[str, Any]
    ) -> Session:
        """Bring a session back from an engine snapshot (its history, mode, rules, todos)."""
        cwd = self._workspace(str(cwd))
        llm = {k: snapshot[k] for k in ("provider", "model") if snapshot.get(k)}
        # Only the editor's own word, stored at session/new, carries over; nothing widens it.
        config = self._config(cwd, {"llm": llm}, trusted=snapshot.get(EDITOR_TRUST) is True)
        engine = self._engine(engine_id)
        mode = snapshot.get("mode") or config.get("permissions", {}).get("mode", "default")
        spec = SessionSpec(
            session_id=session_id,
            cwd=cwd,
            config=config,
            mode=mode,
            subagent=snapshot.get("subagent"),
            search=self.store,
            host=self.reports.host(session_id),
        )
        try:
            handle = await engine.restore(spec, snapshot)
        except EngineError as exc:
            raise ServiceError(errors.PROVIDER_UNAVAILABLE, str(exc)) from exc
        return self._adopt(session_id, cwd, config, engine, handle)

    async def _restore(self: ServiceParts, session_id: str) -> Session:
        async with self._restoring:
            if session_id in self.sessions:
                return self.sessions[session_id]
            await need_store(self)
            stored = await self.recorder.stored(session_id) if self.recorder else None
            if stored is None:
                raise ServiceError(errors.SESSION_NOT_FOUND, f"unknown session {session_id!r}")
            record, snapshot = stored
            session = await self.open_snapshot(
                session_id, Path(record.cwd), record.engine, snapshot
            )
            assert self.recorder is not None
            self.recorder.restored(session, unchanged(snapshot, snapshot_of(session)))
            session.seq = await self.recorder.read(self.recorder.store.last_seq, session_id)
            return session

    async def list(
        self: ServiceParts, cwd: str | None, cursor: str | None, limit: int
    ) -> ListSessionsResult:
        """Stored sessions that ran a turn and the open ones, newest first (only `cwd`'s when
        given). A session closed before its first turn is not history."""
        await need_store(self)
        if self.recorder is None:
            return ListSessionsResult(data=[])
        where = str(Path(cwd)) if cwd else None
        try:
            records, next_cursor = await self.recorder.read(
                partial(self.recorder.store.list_sessions, open_ids=list(self.sessions)),
                where,
                cursor,
                limit,
            )
        except StoreError as exc:
            raise ServiceError(errors.INVALID_PARAMS, str(exc)) from exc
        data = [
            SessionSummary(session_id=r.id, title=r.title, cwd=r.cwd, updated_at=iso(r.updated_at))
            for r in records
        ]
        return ListSessionsResult(data=data, next_cursor=next_cursor)

    async def search(self: ServiceParts, query: str, limit: int) -> SearchSessionsResult:
        """Full-text search over every stored session's journal, best match first."""
        await need_store(self)
        if self.recorder is None:
            return SearchSessionsResult(hits=[])
        hits = await self.recorder.read(self.recorder.store.search, query, limit)
        return SearchSessionsResult(
            hits=[
                SearchHit(
                    session_id=h.session_id, role=h.role, snippet=h.snippet, timestamp=iso(h.ts)
                )
                for h in hits
            ]
        )


async def need_store(service: ServiceParts) -> None:
    """A service whose store could not be opened tries again; while it cannot, a request that
    needs the store is refused with the reason (never an empty answer or "unknown session")."""
    if service.recorder is not None or store_failure(service.environ) is None:
        return
    store = await anyio.to_thread.run_sync(reopen, service.environ)
    if store is not None:
        service.store, service.recorder = store, Recorder(store)
        return
    raise ServiceError(
        errors.INTERNAL_ERROR,
        f"the session store cannot be opened: {store_failure(service.environ)}. Stored "
        "sessions are kept on disk; this is tried again at the next request",
    )

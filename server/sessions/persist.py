"""The session service's side of the store: what it records at each point of a turn, and how
a stored session is read back. Writes are queued (see store.py); reads run in a worker thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from protocol.content import ImageContent, TextContent
from protocol.methods import PromptParams, PromptResult
from server.sessions.model import ClientCapabilities, Session, Turn
from server.sessions.prompt_input import label
from server.sessions.store import JournalEntry, SessionRecord, Store

EDITOR_TRUST = "workspaceTrusted"
"""Session state key: the editor vouched for the folder on `session/new`; a load keeps it."""


def prompt_text(params: PromptParams, cwd: Path) -> str:
    """The prompt as the journal shows it; attached context by its name (`label`)."""
    parts = []
    for block in params.prompt:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image {block.mime_type}]")
        else:
            parts.append(label(block, cwd) or "")
    return "\n".join(parts)


def prompt_trace(params: PromptParams) -> dict[str, Any]:
    """The prompt for the trace: image data left out (the transcript keeps what the model got)."""
    blocks = []
    for block in params.prompt:
        wire = block.to_wire()
        if isinstance(block, ImageContent):
            wire = {"type": "image", "mimeType": block.mime_type, "bytes": len(block.data)}
        blocks.append(wire)
    options = params.options.to_wire() if params.options else None
    return {"prompt": blocks, "options": options}


class Recorder:
    """Records sessions and turns for one service; owns the store it is given."""

    def __init__(self, store: Store):
        self.store = store
        self._saved: dict[str, int] = {}
        """Session id -> messages of its history already in the stored transcript."""

    # -- writes ----------------------------------------------------------------------------

    def created(
        self, session: Session, subagent: str | None, *, editor_trusted: bool = False
    ) -> None:
        state: dict[str, Any] = dict(session.engine.describe(session.handle))
        if subagent:
            state["subagent"] = subagent
        if editor_trusted:
            state[EDITOR_TRUST] = True
        self.store.create_session(session.id, str(session.cwd), session.engine.id, state)
        self._saved[session.id] = 0

    def restored(self, session: Session, messages: int) -> None:
        self._saved[session.id] = messages

    def turn_started(
        self,
        session: Session,
        turn: Turn,
        params: PromptParams,
        caps: ClientCapabilities,
        *,
        seq: int | None = None,
        origin: str | None = None,
    ) -> None:
        state = snapshot(session, since=ONLY_LENGTH) or dict(
            session.engine.describe(session.handle)
        )
        state.pop("history", None)
        length = state.pop("historyLength", 0)
        trace = {
            **prompt_trace(params),
            "state": state,
            "historyLength": length,
            "capabilities": {
                "questions": caps.questions,
                "permissions": caps.permissions,
                "reportTurns": caps.report_turns,
            },
        }
        text = prompt_text(params, session.cwd)
        self.store.begin_turn(session.id, turn.id, text, trace, seq=seq, origin=origin)

    def update(self, session: Session, turn_id: str, seq: int, update: Any) -> None:
        self.store.record_update(session.id, turn_id, seq, update)

    def trace(self, session: Session, turn_id: str, kind: str, data: dict[str, Any]) -> None:
        self.store.record_trace(session.id, turn_id, kind, data)

    async def turn_ended(self, session: Session, turn: Turn, result: PromptResult) -> int:
        """Close the turn in the store; returns how many writes the store could not make."""
        self.store.end_turn(session.id, turn.id, result.to_wire(), self._new_messages(session))
        await self.store.flush()
        return self.store.pending

    def step_finished(self, session: Session, turn: Turn) -> None:
        """A finished step is saved at once: a crash later in the turn keeps it (and the todos
        it wrote), so the history resumes where the journal shows."""
        self.store.save_step(session.id, turn.id, self._new_messages(session))

    def _new_messages(self, session: Session) -> dict[str, Any]:
        """The engine's snapshot with only the messages not stored yet (from `historyStart`)."""
        saved = self._saved.get(session.id, 0)
        state = snapshot(session, since=saved)
        history = state.pop("history", [])
        length = state.pop("historyLength", len(history))
        start = min(saved, length)  # a history shorter than what was saved starts over there
        state["history"], state["historyStart"] = history, start
        self._saved[session.id] = length
        return state

    def state_changed(self, session: Session) -> None:
        self.store.patch_state(session.id, dict(session.engine.describe(session.handle)))

    # -- reads -----------------------------------------------------------------------------

    async def stored(self, session_id: str) -> tuple[SessionRecord, dict[str, Any]] | None:
        """The stored session and the snapshot to restore it from."""
        await self.store.flush()
        record = await anyio.to_thread.run_sync(self.store.session, session_id)
        if record is None:
            return None
        length = int(record.state.get("transcriptLength", 0))
        history = await anyio.to_thread.run_sync(self.store.transcript, session_id, length)
        return record, {**record.state, "history": history}

    async def exists(self, session_id: str) -> bool:
        await self.store.flush()
        return await anyio.to_thread.run_sync(self.store.session, session_id) is not None

    async def journal(self, session_id: str) -> list[JournalEntry]:
        await self.store.flush()
        return await anyio.to_thread.run_sync(self.store.journal, session_id)

    async def read(self, fn: Any, *args: Any) -> Any:
        await self.store.flush()
        return await anyio.to_thread.run_sync(fn, *args)


ONLY_LENGTH = 1 << 62
"""`since` for a snapshot that needs the history's length, not its messages."""


def snapshot(session: Session, *, since: int = 0) -> dict[str, Any]:
    """The engine's snapshot of the session (its history from message `since` on)."""
    return dict(session.engine.snapshot(session.handle, since=since))

"""Where a turn's work reports: the turn's own sink, which goes quiet at the turn's terminal, and
the sink of work that outlives its turn (a background subagent), which follows the session.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

import anyio

from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    PermissionOption,
    Question,
    RequestPermissionParams,
    RequestPermissionResult,
    ToolCallRef,
)
from protocol.updates import PermissionNote, QuestionNote, SessionUpdateKind
from server.sessions.model import ClientChannel, Session, Turn
from server.turn import UserNotReachable

log = logging.getLogger(__name__)

CANCELLED = {"outcome": {"outcome": "cancelled"}}


class SinkOwner(Protocol):
    """What a sink needs of the session service."""

    channel: ClientChannel
    sessions: dict[str, Session]

    def _send(self, session: Session, turn: Turn, update: SessionUpdateKind) -> None: ...

    def _trace(
        self, session: Session, turn: Turn, kind: str, request: Any, result: Any
    ) -> None: ...


class TurnSinkImpl:
    """The sink one turn reports through; it goes quiet at the turn's terminal."""

    def __init__(self, service: SinkOwner, session: Session, turn: Turn):
        self.session_id = session.id
        self.turn_id = turn.id
        self._service = service
        self._session = session
        self._turn = turn

    def _live(self) -> Turn | None:
        """The turn updates join now; None drops them."""
        return self._turn if self._turn.live else None

    def _asking(self) -> str | None:
        """The turn a request to the user belongs to; None refuses it."""
        return self.turn_id if self._turn.live else None

    def emit(self, update: SessionUpdateKind) -> None:
        turn = self._live()
        if turn is None:
            log.debug("dropped late %s for turn %s", update.kind, self.turn_id)
            return
        self._service._send(self._session, turn, update)

    def _trace(self, kind: str, request: RequestPermissionParams | AskQuestionParams, result):
        turn = self._live()
        if turn is not None:
            self._service._trace(self._session, turn, kind, request, result)

    async def request_permission(
        self, tool_call: ToolCallRef, options: list[PermissionOption]
    ) -> RequestPermissionResult:
        channel = self._service.channel
        turn_id = self._asking()
        if turn_id is None:
            return RequestPermissionResult.model_validate(CANCELLED)
        if not channel.capabilities.permissions:
            raise UserNotReachable("the client cannot show permission requests")
        self.emit(PermissionNote(tool_call_id=tool_call.tool_call_id))
        params = RequestPermissionParams(
            session_id=self.session_id, turn_id=turn_id, tool_call=tool_call, options=options
        )
        try:
            result = await channel.request_permission(params)
        except Exception as exc:  # the client answered with an error: as good as a refusal
            log.info("permission request answered with an error (%s); treated as rejected", exc)
            result = RequestPermissionResult.model_validate(CANCELLED)
        outcome = result.outcome.option_id or result.outcome.outcome
        self.emit(PermissionNote(tool_call_id=tool_call.tool_call_id, outcome=outcome))
        self._trace("permission", params, result)
        return result

    async def ask_question(self, questions: list[Question], *, timeout: float) -> AskQuestionResult:
        channel = self._service.channel
        turn_id = self._asking()
        if turn_id is None or not channel.capabilities.questions:
            raise UserNotReachable("the client cannot show questions")
        wire = [q.to_wire() for q in questions]
        self.emit(QuestionNote(questions=wire))
        params = AskQuestionParams(session_id=self.session_id, turn_id=turn_id, questions=questions)
        with anyio.fail_after(timeout):
            try:
                result = await channel.ask_question(params)
            except UserNotReachable:
                raise
            except Exception as exc:  # the client answered with an error: as good as a decline
                log.info("question answered with an error (%s); treated as declined", exc)
                result = AskQuestionResult(declined=True)
        self.emit(
            QuestionNote(questions=wire, outcome="declined" if result.declined else "answered")
        )
        self._trace("question", params, result)
        return result


class AfterTurnSink(TurnSinkImpl):
    """Where work reports after the turn that started it ended: its updates join whichever turn
    of the session runs, and while none does they go out (and are stored) under the turn that
    started the work, so its cards finish; the user is still asked, under the running turn or
    else the one that started the work. Quiet once the session is closed."""

    def _open(self) -> bool:
        return self._service.sessions.get(self.session_id) is self._session

    def _live(self) -> Turn | None:
        if not self._open():
            return None
        turn = self._session.turn
        return turn if turn is not None and turn.live else self._turn

    def _asking(self) -> str | None:
        if not self._open():
            return None
        turn = self._session.turn
        return turn.id if turn is not None and turn.live else self.turn_id

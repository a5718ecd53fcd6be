"""Turns the server runs of its own: background subagents that finish while their session is
idle hand their reports to the model in a turn of their own (`origin: report`).

Only for clients that show turns they did not prompt (`reportTurns`); for the others a turn
waits for its background subagents, so nothing arrives unprompted.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from protocol.updates import SubagentUpdate
from server.sessions.model import Session, Turn
from server.sessions.sinks import AfterTurnSink, SinkOwner
from server.turn import TurnSink

log = logging.getLogger(__name__)


class ReportOwner(SinkOwner, Protocol):
    """What running report turns needs of the session service."""

    async def report_turn(self, session: Session, text: str, finals: list[SubagentUpdate]) -> Any:
        ...


class SessionHostImpl:
    """The `SessionHost` of one session."""

    def __init__(self, reports: ReportTurns, session_id: str):
        self._reports, self._session_id = reports, session_id

    def wake(self) -> None:
        self._reports.wake(self._session_id)

    def sink_after(self, turn_id: str) -> TurnSink:
        service = self._reports.service
        session = service.sessions[self._session_id]
        return AfterTurnSink(service, session, Turn(id=turn_id, live=False))


class ReportTurns:
    def __init__(self, service: ReportOwner):
        self.service = service
        self._waking: dict[str, asyncio.Task[None]] = {}

    def host(self, session_id: str) -> SessionHostImpl | None:
        if not self.service.channel.capabilities.report_turns:
            return None
        return SessionHostImpl(self, session_id)

    def wake(self, session_id: str) -> None:
        if session_id in self._waking:
            return  # the running waker takes every report that is ready when it looks
        self._waking[session_id] = asyncio.get_running_loop().create_task(self._run(session_id))

    async def _run(self, session_id: str) -> None:
        try:
            while True:
                session = self.service.sessions.get(session_id)
                if session is None:
                    return
                if session.turn is not None:
                    await session.turn.ended.wait()
                    continue
                background = session.engine.offers(session.handle).background
                taken = background.take() if background is not None else None
                if taken is None:
                    return
                text, finals = taken
                await self.service.report_turn(session, text, finals)
        except Exception:
            log.exception("a report turn of session %s failed to run", session_id)
        finally:
            # Synchronously with the last look: a wake after it starts a new waker.
            if self._waking.get(session_id) is asyncio.current_task():
                del self._waking[session_id]

    async def close(self) -> None:
        tasks = list(self._waking.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

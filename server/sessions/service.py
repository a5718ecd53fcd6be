"""The session service: sessions, the turn lifecycle, and interactions with the client.

Every turn ends with exactly one terminal: `completed`, `aborted` (cancel), `failed` (error) or
`timed_out` (deadline). Events carry a per-session `seq`; anything a turn produces after its
terminal is dropped. Front doors call this service and translate; they hold no turn logic.

With a store, every event is journaled and traced as it is sent (`_send`), the prompt at turn
start, the engine's snapshot at each terminal; `load` brings a stored session back and replays
what the user saw.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Literal, cast

import anyio

from protocol import errors
from protocol.content import TextContent
from protocol.lifecycle import SandboxStatus
from protocol.methods import (
    BackgroundSubagent,
    ModeInfo,
    ModelState,
    ModeState,
    NewSessionParams,
    PermissionMode,
    PromptParams,
    PromptResult,
    RewindParams,
    RewindResult,
    SessionInfoResult,
    SessionUpdateParams,
)
from protocol.updates import (
    SessionUpdateKind,
    StepFinish,
    StopReason,
    StoreWarning,
    SubagentUpdate,
    Terminal,
    TurnEnd,
    UserMessageChunk,
)
from server.agent.loop import wire_usage
from server.config import ConfigError, deep_merge, load_config
from server.engines.base import EngineDriver, EngineError, SessionOffer
from server.permissions import MODE_DESCRIPTIONS
from server.policy.paths import CONTROL_NAMES
from server.providers.messages import Usage as ProviderUsage
from server.redact import redact
from server.session_ids import invalid_session_id, valid_session_id
from server.sessions.ceiling import above_ceiling
from server.sessions.errors import ServiceError
from server.sessions.model import ClientChannel, Session, Turn
from server.sessions.persist import Recorder, prompt_text
from server.sessions.prompt_input import oversized, to_turn_input, too_large
from server.sessions.recording import TraceTarget, tracing
from server.sessions.reports import ReportTurns
from server.sessions.sinks import TurnSinkImpl
from server.sessions.store import Store
from server.sessions.stored import StoredSessions
from server.tools.sandbox import Sandbox, probe, settings_from
from server.turn import SessionSpec, TurnOutcome

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 30.0
"""How long closing a session waits for its cancelled turn to write its end."""


class SessionService(StoredSessions):
    """Owns sessions and their turns. With a `store` (which it closes in `close_all`) sessions
    are persisted and can be loaded, listed and searched."""

    def __init__(
        self,
        engines: dict[str, EngineDriver],
        channel: ClientChannel,
        *,
        flags: dict[str, Any] | None = None,
        store: Store | None = None,
        environ: dict[str, str] | None = None,
        client_cwd: Path | None = None,
    ):
        """`environ`: the environment whose `AGENTLS_*` and key variables configure sessions
        (a listening server's connection's); None: this process's. `client_cwd`: where a
        relative session `cwd` is taken from (a connection's working directory)."""
        self.client_cwd = client_cwd
        self.engines = engines
        self.channel = channel
        self.flags = flags or {}
        self.environ = environ
        self.sessions: dict[str, Session] = {}
        self.store = store
        self.recorder = Recorder(store) if store else None
        self._restoring = anyio.Lock()
        self.reports = ReportTurns(self)

    # -- sessions -----------------------------------------------------------------------------

    async def new_session(
        self, params: NewSessionParams, *, session_id: str | None = None
    ) -> SessionInfoResult:
        cwd = self._workspace(params.cwd)
        overrides: dict[str, Any] = {"llm": {}}
        if params.provider:
            overrides["llm"]["provider"] = params.provider
        if params.model:
            overrides["llm"]["model"] = params.model
        session_flags = {"sandbox": {"mode": params.sandbox}} if params.sandbox else None
        config = self._config(
            cwd, overrides, trusted=bool(params.workspace_trusted), flags=session_flags
        )
        engine = self._engine(params.engine or config.get("engine") or "native")
        if session_id is not None and not valid_session_id(session_id):
            raise ServiceError(errors.INVALID_PARAMS, invalid_session_id(session_id))
        if session_id in self.sessions or (
            session_id and self.recorder and await self.recorder.exists(session_id)
        ):
            raise ServiceError(errors.INVALID_PARAMS, f"session {session_id} already exists")
        session_id = session_id or f"sess_{uuid.uuid4().hex[:16]}"
        if params.mode and (reason := above_ceiling(params.mode, self.environ)):
            raise ServiceError(errors.INVALID_PARAMS, reason)
        mode = params.mode or config.get("permissions", {}).get("mode", "default")
        spec = SessionSpec(
            session_id=session_id,
            cwd=cwd,
            config=config,
            mode=mode,
            subagent=params.subagent,
            search=self.store,
            host=self.reports.host(session_id),
        )
        try:
            handle = await engine.create_session(spec)
        except EngineError as exc:
            raise ServiceError(errors.PROVIDER_UNAVAILABLE, str(exc)) from exc
        session = self._adopt(session_id, cwd, config, engine, handle)
        if self.recorder:
            self.recorder.created(
                session, params.subagent, editor_trusted=bool(params.workspace_trusted)
            )
        return self.describe(session)

    def _adopt(
        self, session_id: str, cwd: Path, config: dict[str, Any], engine: EngineDriver, handle: Any
    ) -> Session:
        session = Session(session_id, cwd, config, engine, handle)
        self.sessions[session_id] = session
        return session

    def _workspace(self, cwd: str) -> Path:
        path = Path(cwd)
        if not path.is_absolute() and self.client_cwd is not None:
            path = (self.client_cwd / path).resolve()
        if not path.is_absolute() or not path.is_dir():
            raise ServiceError(
                errors.INVALID_PARAMS, f"cwd must be an existing absolute directory: {cwd}"
            )
        return path

    def sandbox_status(self) -> SandboxStatus:
        """The sandbox sessions get by default (the configuration without a workspace)."""
        try:
            settings = settings_from(load_config(None, flags=self.flags, environ=self.environ))
        except (ConfigError, ValueError) as exc:
            return SandboxStatus(
                mode="off", configured="off", network=False, auto_allow=False, notice=str(exc)
            )
        found = probe() if settings.mode != "off" else None
        usable = found is not None and found.available
        environ = os.environ if self.environ is None else self.environ
        held = Sandbox(settings, Path.cwd(), found, environ) if found and usable else None
        return SandboxStatus(
            mode=settings.mode if usable else "off",
            configured=settings.mode,
            network=settings.network,
            network_ask=settings.network_ask or None,
            allowed_hosts=list(settings.allowed_hosts) or None,
            auto_allow=settings.auto_allow,
            kind=found.kind if found and usable else None,
            notice=found.reason if found and not usable else None,
            sockets=("blocked" if held.probe.kind == "bwrap" else "open") if held else None,
            deny_read=[str(p) for p in held.secrets()] if held else None,
            protected=list(CONTROL_NAMES) if held else None,
        )

    def _config(
        self,
        cwd: Path,
        overrides: dict[str, Any],
        *,
        trusted: bool = False,
        flags: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """`flags`: the session's own choices, over the server's flags (below what a project
        made stricter)."""
        layered = deep_merge(self.flags, flags) if flags else self.flags
        try:
            return deep_merge(
                load_config(cwd, flags=layered, trusted=trusted, environ=self.environ), overrides
            )
        except ConfigError as exc:
            raise ServiceError(errors.INVALID_PARAMS, str(exc)) from exc

    def _engine(self, engine_id: str) -> EngineDriver:
        engine = self.engines.get(engine_id)
        if engine is None:
            known = ", ".join(sorted(self.engines))
            raise ServiceError(
                errors.ENGINE_UNAVAILABLE, f"unknown engine {engine_id!r}; available: {known}"
            )
        return engine

    def describe(self, session: Session) -> SessionInfoResult:
        state = session.engine.describe(session.handle)
        from server.providers.catalog import models_for

        models = models_for(state["provider"], current=state["model"])
        return SessionInfoResult(
            session_id=session.id,
            engine=session.engine.id,
            model=state["model"],
            provider=state["provider"],
            modes=ModeState(
                current_mode_id=cast(PermissionMode, state["mode"]),
                available_modes=[
                    ModeInfo(id=m, name=m, description=d) for m, d in MODE_DESCRIPTIONS.items()
                ],
            ),
            models=ModelState(current_model_id=state["model"], available_models=models),
        )

    def get(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise ServiceError(errors.SESSION_NOT_FOUND, f"unknown session {session_id!r}")
        return session

    def offer(self, session_id: str) -> SessionOffer:
        """What the session offers besides turns (tools, commands, skills, profiles, MCP)."""
        session = self.get(session_id)
        return session.engine.offers(session.handle)

    async def close(self, session_id: str) -> None:
        """Cancel the running turn and wait for its end to be written (so a store closed after
        this has it), then free the session."""
        session = self.get(session_id)
        turn = session.turn
        self.cancel(session_id)
        if turn is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_WAIT_S):
                await turn.ended.wait()
        self.sessions.pop(session_id, None)
        await session.engine.close_session(session.handle)

    async def close_all(self) -> None:
        """Close every session, dispose the engines and close the store (server shutdown)."""
        await self.reports.close()
        for session_id in list(self.sessions):
            await self.close(session_id)
        for engine in self.engines.values():
            await engine.dispose()
        if self.store is not None:
            await self.store.aclose()

    async def rewind(self, params: RewindParams) -> RewindResult:
        """Undo a turn and the later ones: files, and with `conversation` a branch session."""
        from server.sessions.rewind import rewind

        session = self.get(params.session_id)
        return await rewind(session, params, self.store, self.environ)

    def set_model(self, session_id: str, model: str) -> None:
        session = self.get(session_id)
        try:
            session.engine.set_model(session.handle, model)
        except EngineError as exc:
            raise ServiceError(errors.INVALID_PARAMS, str(exc)) from exc
        if self.recorder:
            self.recorder.state_changed(session)

    def set_mode(self, session_id: str, mode: str) -> None:
        session = self.get(session_id)
        if reason := above_ceiling(mode, self.environ):
            raise ServiceError(errors.INVALID_PARAMS, reason)
        try:
            session.engine.set_mode(session.handle, mode)
        except EngineError as exc:
            raise ServiceError(errors.INVALID_PARAMS, str(exc)) from exc
        if self.recorder:
            self.recorder.state_changed(session)

    def background(self, session_id: str) -> list[BackgroundSubagent]:
        found = self.offer(session_id).background
        return [t.info() for t in found.tasks.values()] if found else []

    def stop_subagent(self, session_id: str, task_id: str) -> bool:
        """Stop one background subagent; the model is told at its next call."""
        found = self.offer(session_id).background
        if found is None or task_id not in found.tasks:
            known = ", ".join(found.tasks) if found else ""
            raise ServiceError(
                errors.INVALID_PARAMS,
                f"no background subagent {task_id!r} in session {session_id}; "
                f"known: {known or 'none'}",
            )
        return found.stop(task_id, by_model=False)

    # -- turns --------------------------------------------------------------------------------

    async def prompt(self, params: PromptParams) -> PromptResult:
        session = self.get(params.session_id)
        while session.turn is not None and session.turn.origin == "report":
            await session.turn.ended.wait()  # a report's turn is short: the prompt follows it
        if session.turn is not None:
            raise ServiceError(
                errors.SESSION_BUSY,
                f"session {session.id} is running turn {session.turn.id}; cancel it or steer",
            )
        if too_big := oversized(params, session.config):
            raise ServiceError(errors.INVALID_PARAMS, too_big)
        return await self._turn(session, params)

    async def report_turn(
        self, session: Session, text: str, finals: list[SubagentUpdate]
    ) -> PromptResult:
        """A turn of the server's own: background subagents' reports (`text`) handed to the
        model while the session was idle. The client sees it open with the reports as a
        `user_message_chunk` of origin `report`, and each one's final `subagent` update."""
        params = PromptParams(session_id=session.id, prompt=[TextContent(text=text)])
        return await self._turn(session, params, origin="report", finals=finals)

    async def _turn(
        self,
        session: Session,
        params: PromptParams,
        *,
        origin: Literal["user", "report"] = "user",
        finals: list[SubagentUpdate] | None = None,
    ) -> PromptResult:
        turn = Turn(id=f"turn_{uuid.uuid4().hex[:12]}", origin=origin)
        session.turn = turn
        session.turn_ids.append(turn.id)
        try:
            reserved = None
            if self.recorder:
                session.seq += 1  # the prompt's place in the session's events, as replayed
                reserved = session.seq
                caps = self.channel.capabilities
                report = origin if origin == "report" else None
                self.recorder.turn_started(
                    session, turn, params, caps, seq=session.seq, origin=report
                )
            if origin == "report":
                chunk = UserMessageChunk(text=prompt_text(params, session.cwd), origin="report")
                self._deliver(session, turn.id, chunk, seq=reserved)
                for update in finals or []:
                    self._send(session, turn, update)
            result = await self._run(session, turn, params)
        finally:
            session.turn = None
            session.updated_at = time.time()
            turn.ended.set()
        return result

    async def _run(self, session: Session, turn: Turn, params: PromptParams) -> PromptResult:
        sink = TurnSinkImpl(self, session, turn)
        deadline = float(session.config.get("turnTimeout") or 1800)
        outcome: TurnOutcome | None = None
        error: str | None = None
        with anyio.CancelScope() as scope, self._tracing(session, turn):
            turn.scope = scope
            with anyio.move_on_after(deadline) as deadline_scope:
                try:
                    turn_input = to_turn_input(turn.id, params, session.cwd)
                    turn_input.origin = turn.origin
                    outcome = await session.engine.run_turn(session.handle, turn_input, sink)
                except Exception as exc:
                    log.warning(
                        "turn %s failed: %s", turn.id, exc, exc_info=log.isEnabledFor(logging.DEBUG)
                    )
                    error = redact(str(exc)) or type(exc).__name__
        turn.live = False
        usage = wire_usage(turn.billed)
        terminal: Terminal
        stop: StopReason
        if scope.cancelled_caught:
            terminal, stop = "aborted", "cancelled"
        elif deadline_scope.cancelled_caught:
            terminal, stop = "timed_out", "timeout"
            error = f"the turn exceeded its deadline of {deadline:g} s"
        elif error is not None:
            terminal, stop = "failed", "error"
        else:
            assert outcome is not None
            terminal, stop, usage = "completed", outcome.stop_reason, wire_usage(outcome.usage)
        unsent = unsent_steers(session) or None
        result = PromptResult(
            turn_id=turn.id,
            terminal=terminal,
            stop_reason=stop,
            usage=usage,
            error=error,
            unsent_steers=unsent,
        )
        if self.recorder:
            result.stored = await self._stored(session, turn, result)
        end = TurnEnd(
            terminal=terminal,
            stop_reason=stop,
            usage=usage,
            error=error,
            unsent_steers=unsent,
            stored=result.stored,
        )
        self._send(session, turn, end)
        return result

    async def _stored(self, session: Session, turn: Turn, result: PromptResult) -> bool | None:
        """Write the turn's end; None when everything reached the store, else False after a
        `store_warning` (the writes stay queued and are retried with the next ones)."""
        assert self.recorder is not None
        with anyio.CancelScope(shield=True):  # a signal must not cut the turn_end that follows
            pending = await self.recorder.turn_ended(session, turn, result)
        if not pending:
            return None
        error = self.recorder.store.error or "the session store cannot write"
        self._deliver(session, turn.id, StoreWarning(error=error, pending=pending))
        return False

    def _tracing(self, session: Session, turn: Turn) -> AbstractContextManager[None]:
        if self.store is None:
            return nullcontext()
        return tracing(TraceTarget(self.store, session.id, turn.id))

    def cancel(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.turn is None or session.turn.scope is None:
            return
        session.turn.scope.cancel()

    def cancel_all(self) -> None:
        """Cancel every running turn (a signal to the process): each ends `aborted` and its
        prompt is answered as for `session/cancel`."""
        for session_id in list(self.sessions):
            self.cancel(session_id)

    def steer(self, session_id: str, text: str) -> None:
        session = self.get(session_id)
        if session.turn is None:
            raise ServiceError(
                errors.INVALID_PARAMS, "no turn is running; send session/prompt instead"
            )
        if too_big := too_large(len(text.encode("utf-8", "surrogatepass")), session.config):
            raise ServiceError(errors.INVALID_PARAMS, too_big)
        try:
            session.engine.steer(session.handle, text)
        except EngineError as exc:
            raise ServiceError(errors.INVALID_PARAMS, str(exc)) from exc

    def _send(self, session: Session, turn: Turn, update: SessionUpdateKind) -> None:
        """Every event of a turn passes here: delivered to the client, then recorded."""
        seq = self._deliver(session, turn.id, update)
        if self.recorder:
            self.recorder.update(session, turn.id, seq, update)
        if isinstance(update, StepFinish):
            turn.billed += ProviderUsage(**update.usage.model_dump())
            if self.recorder:
                self.recorder.step_finished(session, turn)

    def _deliver(
        self, session: Session, turn_id: str, update: SessionUpdateKind, *, seq: int | None = None
    ) -> int:
        """Send one update; a replayed one keeps the `seq` it was sent with."""
        if seq is None:
            session.seq += 1
            seq = session.seq
        params = SessionUpdateParams(session_id=session.id, turn_id=turn_id, seq=seq, update=update)
        try:
            self.channel.send_update(params)
        except Exception:
            log.exception("could not deliver an update for session %s", session.id)
        return seq

    def _trace(self, session: Session, turn: Turn, kind: str, request: Any, result: Any) -> None:
        if self.recorder and turn.live:
            data = {"request": request.to_wire(), "result": result.to_wire()}
            self.recorder.trace(session, turn.id, kind, data)


def unsent_steers(session: Session) -> list[str]:
    """Steers the ended turn never took, taken back from the engine."""
    return list(session.engine.unsent_steers(session.handle))

"""The ACP front door: `agentls acp` is an Agent Client Protocol agent (protocol version 1).

Zed, JetBrains AI Assistant, Neovim (CodeCompanion) and Emacs (agent-shell) start it and speak
NDJSON JSON-RPC on stdio through the `agent-client-protocol` SDK. Each ACP method calls the
session service; our events go back as `session/update` notifications, permissions as
`session/request_permission`, questions as `elicitation/create` (or, when the client has no form
elicitation, back to the model, which asks in the chat). Translation only: the turn logic stays
in the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import signal
from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import acp
from acp import schema
from pydantic import ValidationError

from protocol import errors
from protocol.methods import (
    PROTOCOL_VERSION,
    AskQuestionParams,
    AskQuestionResult,
    NewSessionParams,
    PromptParams,
    RequestPermissionParams,
    RequestPermissionResult,
    RewindParams,
    SessionInfoResult,
    SessionUpdateParams,
)
from protocol.updates import ModeChanged, ModelSwitched, StepFinish, ToolCall, ToolCallUpdate
from server import __version__
from server.frontends import acp_updates as view
from server.frontends.acp_files import EditorFiles
from server.frontends.acp_lines import MAX_LINE, CheckedLines
from server.frontends.acp_tools import ToolCards
from server.sessions.model import ClientCapabilities
from server.sessions.service import ServiceError, SessionService
from server.tools.sandbox import commands_running
from server.turn import UserNotReachable

log = logging.getLogger(__name__)

T = TypeVar("T")
CANCELLED = {"outcome": {"outcome": "cancelled"}}
REWIND_METHOD = "agentls/session/rewind"
"""The extension method (`_agentls/session/rewind` on the wire) that undoes turns."""


def request_error(exc: ServiceError) -> acp.RequestError:
    # ACP spells "no such session" -32002 (resource not found); busy has no ACP code.
    code = {errors.SESSION_NOT_FOUND: -32002, errors.SESSION_BUSY: errors.INVALID_REQUEST}
    return acp.RequestError(code.get(exc.code, exc.code), str(exc), exc.data)


class AcpDoor:
    """The ACP agent the SDK dispatches to, and the `ClientChannel` the session service uses."""

    def __init__(self, service_factory: Callable[[AcpDoor], SessionService]):
        self.conn: Any = None
        self.client = schema.ClientCapabilities()
        # A client without forms still has the chat: the model is told to ask there.
        self.capabilities = ClientCapabilities(
            questions=True, permissions=True, images=True, diffs=True
        )
        self.service = service_factory(self)
        self._outbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._pump: asyncio.Task | None = None
        self._ask_calls: dict[str, str] = {}
        self.cards = ToolCards()
        self._models: dict[str, list[str]] = {}  # the models each session's user chose
        self._files: dict[str, EditorFiles] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self._pump = asyncio.get_running_loop().create_task(self._deliver())

    # -- outgoing updates, in order -------------------------------------------------------

    def send_update(self, params: SessionUpdateParams) -> None:
        session_id, update = params.session_id, params.update
        if isinstance(update, ToolCall) and update.name == "ask_user_question":
            self._ask_calls[session_id] = update.tool_call_id
        out: list[Any]
        if isinstance(update, ToolCall):
            out = [self.cards.start(session_id, update)]
        elif isinstance(update, ToolCallUpdate):
            out = [self.cards.progress(session_id, update)]
        else:
            out = view.project(update)
        if isinstance(update, StepFinish):
            out.append(view.usage_update(update, self._context_window(session_id)))
        elif isinstance(update, ModelSwitched):
            out.extend(self._config_update(session_id))
        elif isinstance(update, ModeChanged):  # both forms, as for the editor's own change
            out.append(
                schema.CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=update.mode
                )
            )
            out.extend(self._config_update(session_id))
        for item in out:
            self._outbox.put_nowait((session_id, item))

    async def flush(self) -> None:
        """Wait until every queued update is on the wire (before a response or a request)."""
        await self._outbox.join()

    async def _deliver(self) -> None:
        while True:
            session_id, update = await self._outbox.get()
            try:
                await self.conn.session_update(session_id=session_id, update=update)
            except Exception as exc:
                log.debug("could not deliver an update for %s: %s", session_id, exc)
            finally:
                self._outbox.task_done()

    def _context_window(self, session_id: str) -> int:
        from server.providers.catalog import describe

        session = self.service.sessions.get(session_id)
        if session is None:
            return 0
        state = session.engine.describe(session.handle)
        return describe(state["model"], state["provider"]).context_window

    def _config_update(self, session_id: str) -> list[Any]:
        session = self.service.sessions.get(session_id)
        if session is None:
            return []
        options = self._options(self.service.describe(session))
        return [
            schema.ConfigOptionUpdate(session_update="config_option_update", config_options=options)
        ]

    # -- interactions (the ClientChannel side) ---------------------------------------------

    async def request_permission(self, params: RequestPermissionParams) -> RequestPermissionResult:
        await self._propose_from_buffer(params.session_id, params.tool_call.tool_call_id)
        await self.flush()
        tool_call = self.cards.for_permission(params.session_id, params.tool_call)
        options = [
            schema.PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind)
            for o in params.options
        ]
        try:
            response = await self.conn.request_permission(
                session_id=params.session_id, tool_call=tool_call, options=options
            )
        except acp.RequestError as exc:
            log.warning("permission request failed: %s; treated as cancelled", exc)
            return RequestPermissionResult.model_validate(CANCELLED)
        outcome = response.outcome
        if isinstance(outcome, schema.AllowedOutcome):
            return RequestPermissionResult.model_validate(
                {"outcome": {"outcome": "selected", "optionId": outcome.option_id}}
            )
        return RequestPermissionResult.model_validate(CANCELLED)

    async def ask_question(self, params: AskQuestionParams) -> AskQuestionResult:
        """A form when the client has `elicitation.form`. Otherwise the model asks in the chat:
        a permission request cannot carry choices (clients show its options by kind, so three
        answers read "Accept, Accept, Accept", and a plain accept would pick one)."""
        await self.flush()
        elicitation = self.client.elicitation
        if elicitation is not None and elicitation.form is not None:
            try:
                return await self._ask_by_form(params, self._ask_calls.get(params.session_id))
            except acp.RequestError as exc:
                log.info("form elicitation failed (%s); the model asks in the chat", exc)
        raise UserNotReachable("the client has no forms", hint=view.ask_in_chat(params.questions))

    async def _ask_by_form(self, params: AskQuestionParams, tool_call_id: str | None):
        questions = params.questions
        mode = schema.ElicitationFormSessionMode(
            session_id=params.session_id,
            tool_call_id=tool_call_id,
            requested_schema=view.elicitation_schema(questions),
        )
        message = questions[0].question if len(questions) == 1 else "The agent has questions"
        response = await self.conn.create_elicitation(message=message, mode=mode)
        if not isinstance(response, schema.AcceptElicitationResponse):
            return AskQuestionResult(declined=True)
        answers = view.answers_from_form(questions, response.content)
        return AskQuestionResult(answers=answers) if answers else AskQuestionResult(declined=True)

    async def _propose_from_buffer(self, session_id: str, call_id: str) -> None:
        """An edit asked about shows its change against the editor's buffer, which may hold
        unsaved text the disk does not: the card is updated, then the request goes out."""
        files, path = self._files.get(session_id), self.cards.proposal_path(session_id, call_id)
        if files is None or path is None:
            return
        before = await files.read_text(Path(path))
        if before is not None:
            self._outbox.put_nowait((session_id, self.cards.repropose(session_id, call_id, before)))

    # -- the ACP agent methods -------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        self.client = client_capabilities or schema.ClientCapabilities()
        ours = (self.client.field_meta or {}).get("agentls")
        shows = isinstance(ours, dict) and ours.get("reportTurns") is True
        self.capabilities = replace(self.capabilities, report_turns=shows)
        has = lambda name: callable(getattr(self.service, name, None))  # noqa: E731
        sessions = schema.SessionCapabilities(
            list=schema.SessionListCapabilities() if has("list") else None,
            close=schema.SessionCloseCapabilities(),
        )
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=has("load"),
                mcp_capabilities=schema.McpCapabilities(http=True),
                prompt_capabilities=schema.PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=sessions,
                field_meta={"agentls": {"rewind": f"_{REWIND_METHOD}", "reportTurns": True}},
            ),
            agent_info=schema.Implementation(name="agentls", title="agentls", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> schema.AuthenticateResponse:
        # agentls offers no auth methods (keys come from env or config); clients built for
        # agents that do (CodeCompanion's adapters, agent-shell) may still call this.
        return schema.AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> schema.NewSessionResponse:
        meta = kwargs.get("agentls")  # the SDK spreads `_meta` into the keyword arguments
        trusted = meta.get("workspaceTrusted") if isinstance(meta, dict) else None
        params = NewSessionParams(cwd=cwd, workspace_trusted=trusted is True)
        info = await self._call(self.service.new_session(params))
        self._attach_files(info.session_id)
        await self._attach_mcp(info.session_id, mcp_servers)
        self._announce_commands(info.session_id)
        return schema.NewSessionResponse(
            session_id=info.session_id,
            modes=view.mode_state(info),
            config_options=self._options(info, chosen=True),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> schema.LoadSessionResponse:
        load = getattr(self.service, "load", None)
        if load is None:
            raise acp.RequestError.method_not_found("session/load")
        info: SessionInfoResult = await self._call(load(session_id))
        self._attach_files(info.session_id)
        await self._attach_mcp(session_id, mcp_servers)
        self._close_cards(session_id, "Interrupted: this tool call never finished.")
        await self.flush()
        self._announce_commands(info.session_id)
        return schema.LoadSessionResponse(
            modes=view.mode_state(info), config_options=self._options(info, chosen=True)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> schema.ListSessionsResponse:
        listing = getattr(self.service, "list", None)
        if listing is None:
            raise acp.RequestError.method_not_found("session/list")
        result = listing(cwd, cursor, 50)
        if inspect.isawaitable(result):
            result = await self._call(result)
        page = result.to_wire() if hasattr(result, "to_wire") else dict(result)
        return schema.ListSessionsResponse(
            sessions=[view.session_info(row) for row in page.get("data", [])],
            next_cursor=page.get("nextCursor"),
        )

    async def prompt(
        self, prompt: list[Any], session_id: str, **kwargs: Any
    ) -> schema.PromptResponse:
        params = PromptParams.model_validate(
            {"sessionId": session_id, "prompt": view.prompt_blocks(prompt)}
        )
        result = await self._call(self.service.prompt(params))
        why = "Cancelled: the turn was stopped before this tool call finished."
        alive = session_id in self.service.sessions
        background = self.service.background(session_id) if alive else []
        running = [b.task_id for b in background if b.status == "running"]
        why = why if result.terminal == "aborted" else "Did not finish."
        self._close_cards(session_id, why, running=running)
        await self.flush()
        problem = view.turn_error(result)
        if problem:
            raise acp.RequestError(errors.INTERNAL_ERROR, problem, {"terminal": result.terminal})
        return view.prompt_response(result)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`_agentls/session/rewind`: agentls's `session/rewind`, same params and result."""
        if method != REWIND_METHOD:
            raise acp.RequestError.method_not_found(f"_{method}")
        try:
            parsed = RewindParams.model_validate(params)
        except ValidationError as exc:
            raise acp.RequestError.invalid_params({"errors": exc.errors(include_url=False)}) from None
        return (await self._call(self.service.rewind(parsed))).to_wire()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.service.cancel(session_id)

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> schema.SetSessionModeResponse:
        self._sync(lambda: self.service.set_mode(session_id, mode_id))
        for update in self._config_update(session_id):
            self._outbox.put_nowait((session_id, update))
        return schema.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        if not isinstance(value, str) or config_id not in (view.MODEL_OPTION, view.MODE_OPTION):
            raise acp.RequestError.invalid_params({"configId": config_id, "value": value})
        if config_id == view.MODEL_OPTION:
            self._sync(lambda: self.service.set_model(session_id, value))
        else:
            self._sync(lambda: self.service.set_mode(session_id, value))
        info = self._sync(lambda: self.service.describe(self.service.get(session_id)))
        if config_id == view.MODEL_OPTION:
            self._models.setdefault(session_id, []).append(value)
        else:
            self._mode_update(session_id, value)
        return schema.SetSessionConfigOptionResponse(config_options=self._options(info))

    async def close_session(self, session_id: str, **kwargs: Any) -> schema.CloseSessionResponse:
        await self._call(self.service.close(session_id))
        self._files.pop(session_id, None)
        return schema.CloseSessionResponse()

    # -- helpers ---------------------------------------------------------------------------

    def _attach_files(self, session_id: str) -> None:
        """Route the native engine's file tools through the client's `fs/*` when it offers them."""
        fs = self.client.fs
        read, write = bool(fs and fs.read_text_file), bool(fs and fs.write_text_file)
        session = self.service.sessions.get(session_id)
        if session is None or not (read or write):
            return
        use = self.service.offer(session_id).use_editor_files
        if use is None:
            return
        files = EditorFiles(
            self.conn,
            session_id,
            session.cwd,
            read=read,
            write=write,
            flush=self.flush,
            racing=commands_running,
        )
        use(files)
        self._files[session_id] = files

    async def _attach_mcp(self, session_id: str, servers: list[Any] | None) -> None:
        if servers:
            from server.mcp.config import from_acp
            from server.sessions.mcp import attach_servers

            await self._call(attach_servers(self.service, session_id, from_acp(servers)))

    def _options(self, info: SessionInfoResult, *, chosen: bool = False) -> list[Any]:
        """The config options, keeping every model the user chose (`chosen`: this is one)."""
        kept = self._models.setdefault(info.session_id, [])
        if chosen:
            kept.append(info.models.current_model_id)
        return view.config_options(info, keep=kept)

    def _mode_update(self, session_id: str, mode: str) -> None:
        update = schema.CurrentModeUpdate(
            session_update="current_mode_update", current_mode_id=mode
        )
        self._outbox.put_nowait((session_id, update))

    def _close_cards(self, session_id: str, why: str, *, running: Collection[str] = ()) -> None:
        """Engines close their calls; this is for one that did not (an external agent). The
        cards of background subagents still `running` stay open: they report later."""
        for closing in self.cards.close_all(session_id, why, running=running):
            self._outbox.put_nowait((session_id, closing))

    def _announce_commands(self, session_id: str) -> None:
        # Queued before the handler returns, so it goes out right after the response.
        update = schema.AvailableCommandsUpdate(
            session_update="available_commands_update",
            available_commands=available_commands(self.service, session_id),
        )
        self._outbox.put_nowait((session_id, update))

    async def _call(self, awaitable: Awaitable[T]) -> T:
        try:
            return await awaitable
        except ServiceError as exc:
            raise request_error(exc) from None

    def _sync(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except ServiceError as exc:
            raise request_error(exc) from None


def available_commands(service: SessionService, session_id: str) -> list[schema.AvailableCommand]:
    """Slash commands for the client's picker: `/model` and the session's user-invocable skills."""
    return [
        schema.AvailableCommand(
            name=c.name,
            description=c.description,
            input=schema.AvailableCommandInput(root=schema.UnstructuredCommandInput(hint=c.hint))
            if c.hint
            else None,
        )
        for c in service.offer(session_id).commands
    ]


SIGNAL_GRACE = 30.0
"""How long a signalled process waits for its cancelled prompts to be answered."""


def run_acp(service_factory: Callable[[AcpDoor], SessionService]) -> int:
    async def main() -> int:
        door = AcpDoor(service_factory)
        reader, writer = await acp.stdio_streams(limit=MAX_LINE)
        lines = CheckedLines(reader, writer)
        conn = acp.AgentSideConnection(door, lines, listening=False, use_unstable_protocol=True)
        listening = asyncio.ensure_future(conn.listen())
        signalled = on_signals(door, lines, listening)
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await listening
        finally:
            await asyncio.shield(conn.close())
            await door.service.close_all()
        return 128 + signalled[0] if signalled else 0

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 130


def on_signals(door: AcpDoor, lines: CheckedLines, listening: asyncio.Future) -> list[int]:
    """SIGINT, SIGTERM and SIGHUP cancel every running turn; once each prompt has its answer
    (stopReason `cancelled`) on the wire, the door stops. The signals received, in order."""
    received: list[int] = []
    tasks: list[asyncio.Task] = []
    loop = asyncio.get_running_loop()

    async def wind_down() -> None:
        door.service.cancel_all()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(lines.prompts_answered(), SIGNAL_GRACE)
        listening.cancel()

    def handle(signum: int) -> None:
        received.append(signum)
        if len(received) == 1:
            tasks.append(loop.create_task(wind_down()))
        else:
            listening.cancel()  # a second signal: stop now

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(getattr(signal, name), handle, getattr(signal, name))
    return received

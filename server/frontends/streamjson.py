"""The stream-json front door: Claude Code's headless dialect (`-p`, NDJSON on stdin/stdout).

`claude-agent-sdk` drives it unmodified through `cli_path`: it sends user messages and
`control_request`s as NDJSON, we answer with `system/init`, `assistant`, `user` (tool results),
optional `stream_event`s and one `result` per turn. Permission requests and questions go out as
`can_use_tool` control requests when `--permission-prompt-tool stdio` is given.
"""

from __future__ import annotations

import itertools
import json
import logging
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO, assert_never

import anyio
from pydantic import ValidationError

from protocol import errors
from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    NewSessionParams,
    PromptParams,
    PromptResult,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionUpdateParams,
)
from protocol.updates import Usage
from server.frontends.print_refusals import exit_code, refusal_lines
from server.frontends.stdio import Chunks, StdinChunks, read_lines
from server.frontends.streamjson_args import from_claude, to_claude
from server.frontends.streamjson_cli import (
    AUTO_REFUSED,
    ClaudeMode,
    session_mode,
    thinking_options,
)
from server.frontends.streamjson_control import (
    control_error,
    control_success,
    initialize_answer,
    mcp_servers,
    profiles,
    rewind_answer,
    unsupported,
)
from server.frontends.streamjson_frames import (
    DIALECT_VERSION,
    TurnFrames,
    cc_tool_name,
    new_uuid,
)
from server.frontends.streamjson_hooks import hook_caller, with_bridges
from server.frontends.streamjson_init import merged, read_initialize, too_late
from server.frontends.streamjson_input import (
    ControlRequestBody,
    ControlRequestLine,
    ControlResponseLine,
    IgnoredLine,
    Line,
    ToolAnswer,
    UserLine,
    parse_line,
    prompt_blocks,
    tool_answer,
)
from server.frontends.streamjson_rules import adds_allow_rule, suggestions
from server.frontends.streamjson_structured import (
    MAX_RETRIES,
    checked,
    instruction,
    retry_prompt,
    with_structured,
)
from server.frontends.streamjson_usage import ModelUsageTotals, api_key_source, budget_spent
from server.sessions.model import ClientCapabilities
from server.sessions.service import ServiceError

log = logging.getLogger(__name__)

MAX_LINE = 16 * 1024 * 1024
MAX_HELD_LINES = 64
"""Lines held while the session opens (answers to our control requests are never held)."""


@dataclass
class StreamJsonOptions:
    prompt: str | None = None
    input_format: str = "text"
    output_format: str = "text"
    partial: bool = False
    permission_tool: str | None = None
    session_id: str | None = None
    cwd: Path = field(default_factory=Path.cwd)
    images: list[dict[str, Any]] = field(default_factory=list)
    """`--image` blocks, attached to the prompt or to the first user message read."""
    mode: ClaudeMode | None = None
    """Claude Code's mode: `dontAsk` and `auto` are kept by the door, the session runs `default`."""
    model: str | None = None
    resume: str | None = None
    """`--resume ID`: continue that stored session."""
    continue_session: bool = False
    """`--continue`: continue the most recent stored session of `cwd`."""
    replay_user: bool = False
    """`--replay-user-messages`: echo each user message when a turn takes it."""
    state_events: bool = False
    """Write `session_state_changed` frames (Claude Code's CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS)."""
    notes: list[str] = field(default_factory=list)
    """What the run was asked for and does not do (refused flags), for the user."""


class StreamJsonDoor:
    """One process, one session, a queue of turns."""

    def __init__(
        self,
        options: StreamJsonOptions,
        service_factory,
        stdout: BinaryIO,
        *,
        stderr: TextIO | None = None,
    ):
        self.options = options
        self.stderr = sys.stderr if stderr is None else stderr
        interactive = options.permission_tool == "stdio"
        self.capabilities = ClientCapabilities(questions=interactive, permissions=interactive)
        self.service = service_factory(self)
        self.stdout = stdout
        self.session_id = ""
        self.model = ""
        self.running = False
        self.stdin_closed = False
        self.signalled = 0
        self.dont_ask = options.mode == "dontAsk"
        self.notes: list[str] = [
            *options.notes,
            *([AUTO_REFUSED] if options.mode == "auto" else []),
        ]
        self.opened = False
        self.failed = False
        self.waiting = 0
        self.thinking: dict[str, Any] | None = None
        """Prompt options from Claude Code's thinking settings (None: the config's)."""
        self.budget: float | None = None
        """`--max-budget-usd`: the cost (list prices) at which turns stop."""
        self.over_budget = False
        self.schema: dict[str, Any] | None = None
        """The JSON schema final answers must satisfy (structured output), if any."""
        """User messages queued for turns of their own, not yet taken."""
        self.init_answer: dict[str, Any] | None = None
        """The first `initialize` request's answer fields, until it is answered."""
        """Warnings the host shows (`system/informational`), written at the next turn."""
        self._turn_written = anyio.Event()
        self.frames: TurnFrames | None = None
        self.last_result: dict[str, Any] | None = None
        self.usage = ModelUsageTotals()
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[anyio.Event, list[dict[str, Any]]]] = {}
        self.checkpoints: dict[str, str] = {}
        """The uuid of each user message that started a turn -> the turn (`rewind_files`)."""
        self._send, self._receive = anyio.create_memory_object_stream[tuple](100)

    # -- output --------------------------------------------------------------------------

    def write(self, frame: dict[str, Any]) -> None:
        if self.options.output_format != "stream-json":
            return
        self.stdout.write(
            json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        )
        self.stdout.flush()

    def error_frame(self, message: str) -> None:
        if self.options.output_format == "stream-json":
            self.write(
                {
                    "type": "system",
                    "subtype": "error",
                    "error": message,
                    "session_id": self.session_id,
                    "uuid": new_uuid(),
                }
            )
        else:
            print(f"agentls: {message}", file=self.stderr, flush=True)

    # -- the ClientChannel the session service talks to ---------------------------------

    def send_update(self, params: SessionUpdateParams) -> None:
        if self.frames is None:
            return
        for frame in self.frames.on_update(params.update):
            self.write(frame)
        if self.budget is not None and not self.over_budget and self.spent() >= self.budget:
            self.over_budget = True  # Claude Code's maxBudgetUsd: the turn stops here
            self.service.cancel(self.session_id)

    def spent(self) -> float:
        return self.usage.cost_usd()

    async def request_permission(self, params: RequestPermissionParams) -> RequestPermissionResult:
        call = params.tool_call
        if self.dont_ask:
            return RequestPermissionResult.model_validate(
                {
                    "outcome": {"outcome": "selected", "optionId": "reject_once"},
                    "message": "permission mode dontAsk: only pre-approved calls run",
                }
            )
        request = {
            "subtype": "can_use_tool",
            "tool_name": cc_tool_name(call.name),
            "input": to_claude(call.name, call.input, self.cwd()),
            "tool_use_id": call.tool_call_id,
            "permission_suggestions": suggestions(call, params.options),
        }
        if call.reason:
            request["decision_reason"] = call.reason
        answer = await self.control_request(request)
        if answer.behavior == "allow":
            kind = "allow_always" if adds_allow_rule(answer.updatedPermissions) else "allow_once"
            return RequestPermissionResult.model_validate(
                {
                    "outcome": {"outcome": "selected", "optionId": kind},
                    "updatedInput": answer.updatedInput
                    and from_claude(call.name, answer.updatedInput),
                }
            )
        if answer.interrupt:
            self.service.cancel(self.session_id)
        return RequestPermissionResult.model_validate(
            {
                "outcome": {"outcome": "selected", "optionId": "reject_once"},
                "message": answer.message,
            }
        )

    def question_call(self) -> str:
        """The id of the AskUserQuestion tool_use the running turn is asking for."""
        found = self.frames.running_call("AskUserQuestion") if self.frames else None
        return found or f"ask_{new_uuid()}"  # not from a tool call the host saw

    def cwd(self) -> Path:
        return Path(self.service.get(self.session_id).cwd)

    async def ask_question(self, params: AskQuestionParams) -> AskQuestionResult:
        questions = [q.to_wire() for q in params.questions]
        answer = await self.control_request(
            {
                "subtype": "can_use_tool",
                "tool_name": "AskUserQuestion",
                "input": {"questions": questions},
                "tool_use_id": self.question_call(),
                "permission_suggestions": [],
            }
        )
        answers = (answer.updatedInput or {}).get("answers")
        if answer.behavior != "allow" or not answers:
            return AskQuestionResult(declined=True)
        try:
            return AskQuestionResult(answers=answers)
        except ValidationError:
            return AskQuestionResult(declined=True)

    async def control_request(self, request: dict[str, Any]) -> ToolAnswer:
        response = await self.exchange(request)
        if response.get("subtype") == "error":
            return ToolAnswer(behavior="deny", message=response.get("error", ""))
        return tool_answer(response.get("response") or {})

    async def exchange(self, request: dict[str, Any], *, asks: bool = True) -> dict[str, Any]:
        """Send a control request and wait for the host's `control_response` (its `response`
        object: `subtype` success or error). `asks`: the host's user is asked (the session
        state says so meanwhile)."""
        if self.stdin_closed:
            return {"subtype": "error", "error": "no client is listening (stdin closed)"}
        request_id = f"agentls_{next(self._ids)}"
        done, box = anyio.Event(), list[dict[str, Any]]()
        self._pending[request_id] = (done, box)
        if asks:
            self.state("requires_action")
        self.write({"type": "control_request", "request_id": request_id, "request": request})
        try:
            await done.wait()
        except BaseException:
            self.write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)
            if asks and not self._pending and self.running:
                self.state("running")
        return box[0]

    # -- input ---------------------------------------------------------------------------

    async def run(self, stdin: Chunks, signals: AsyncIterator[int] | None = None) -> int:
        """`stdin`: the input's bytes; `signals`: the signals that stop the run (None: this
        process's SIGINT, SIGTERM and SIGHUP)."""
        if self.options.input_format != "stream-json":
            try:
                await self.open_session()
            except ServiceError as exc:
                self.error_frame(str(exc))
                return 1
        work = anyio.CancelScope()
        async with anyio.create_task_group() as watcher:
            watcher.start_soon(self.on_signals, work, signals)
            with work:
                await self.serve(stdin)
            watcher.cancel_scope.cancel()
        await self.service.close_all()
        if self.signalled:
            self.stdout.flush()
            return 128 + self.signalled
        return 1 if self.failed else self.finish()

    async def serve(self, stdin: Chunks) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.turns)
            async with self._send:
                if self.options.input_format == "stream-json":
                    await self.read_stdin(stdin)
                    self.stdin_closed = True
                    for done, box in list(self._pending.values()):
                        box.append({"subtype": "error", "error": "stdin closed"})
                        done.set()
                elif self.options.prompt is not None:
                    blocks = [{"type": "text", "text": self.options.prompt}]
                    await self._send.send((blocks + self.take_images(), None))

    async def on_signals(
        self, work: anyio.CancelScope, signals: AsyncIterator[int] | None = None
    ) -> None:
        """SIGINT, SIGTERM, SIGHUP: the running turn is cancelled as by an interrupt and its
        `result` written, then the door stops (exit 128 + the signal)."""
        if signals is not None:
            await self._stop_on(signals, work)
            return
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as own:
            await self._stop_on(own, work)

    async def _stop_on(self, signals: AsyncIterator[int], work: anyio.CancelScope) -> None:
        async for signum in signals:
            if self.signalled:  # a second signal: stop now
                break
            self.signalled = int(signum)
            if self.running:
                self.service.cancel(self.session_id)
                with anyio.move_on_after(SIGNAL_GRACE):
                    await self._turn_written.wait()
            break
        else:
            return  # the signal source ended: nothing to stop
        work.cancel()

    async def opens(self, message: Line) -> bool:
        """Open the session at the first line (after applying an `initialize` request's fields
        to its config): whether the line can be acted on."""
        if self.opened:
            return True
        self.opened = True
        request_id = None
        if isinstance(message, ControlRequestLine) and message.request.subtype == "initialize":
            request_id = message.request_id
            read = read_initialize(message.request.model_dump(exclude_unset=True))
            if read.hooks:
                events = bool(self.service.flags.get("sdkHookEvents"))
                call = hook_caller(self, events=events)
                read.flags["sdkHooks"] = {"matchers": read.hooks, "call": call}
            self.service.flags = merged(self.service.flags, read.flags)
            self.notes += read.notes
            self.init_answer = read.answer
        self.service.flags = with_bridges(self.service.flags, self)
        try:
            await self.open_session()
        except ServiceError as exc:
            self.failed = True
            if request_id is not None:
                self.write(control_error(request_id, str(exc)))
            else:
                self.error_frame(str(exc))
            return False
        return True

    async def open_session(self) -> None:
        self.notes += [n for n in self.service.flags.get("sdkNotes") or [] if isinstance(n, str)]
        self.thinking = thinking_options(self.service.flags.get("sdkThinking"))
        budget = self.service.flags.get("maxBudgetUsd")
        self.budget = float(budget) if isinstance(budget, int | float) else None
        schema = self.service.flags.get("structuredOutput")
        if isinstance(schema, dict):
            self.schema = schema
            told = [self.service.flags.get("appendSystemPrompt"), instruction(schema)]
            self.service.flags = {
                **self.service.flags,
                "appendSystemPrompt": "\n\n".join(t for t in told if t),
            }
        resume = self.options.resume
        forked = self.service.flags.get("forkSession")
        if forked and (resume is not None or self.options.continue_session):
            raise ServiceError(errors.INVALID_PARAMS, FORK_REFUSED)
        if resume is None and self.options.continue_session:
            recent = await self.service.list(str(self.options.cwd), None, 1)
            resume = recent.data[0].session_id if recent.data else None
        if resume is None:
            params = NewSessionParams(
                cwd=str(self.options.cwd),
                mode=session_mode(self.options.mode),
                model=self.options.model,
            )
            info = await self.service.new_session(params, session_id=self.options.session_id)
        else:
            info = await self.service.load(resume)
            if self.options.model:
                self.service.set_model(resume, self.options.model)
            mode = session_mode(self.options.mode)
            if mode:
                self.service.set_mode(resume, mode)
            info = self.service.describe(self.service.get(resume))
        self.session_id, self.model = info.session_id, info.model

    async def read_stdin(self, stdin: Chunks) -> None:
        """Lines are handled in order as they are read; answers to our control requests at
        once, also while the session opens (which waits for the host's SDK MCP servers, whose
        answers come in on this same stdin): the lines that come meanwhile are held."""
        held: list[Line] = []
        async with anyio.create_task_group() as tg:
            number = 0
            async for line in read_lines(stdin, limit=MAX_LINE):
                number += 1
                message = self.parsed(line, number)
                if self.failed:
                    break
                if message is None:
                    continue
                if isinstance(message, ControlResponseLine) or (self.opened and not held):
                    await self.dispatch(message)
                elif len(held) >= MAX_HELD_LINES:
                    self.error_frame(f"stdin line {number} came while the session opened; skipped")
                else:
                    held.append(message)
                    if len(held) == 1 and not self.opened:
                        tg.start_soon(self.open_then_handle, held)

    async def open_then_handle(self, held: list[Line]) -> None:
        """Open the session with the first held line, then handle the held lines in order
        (more may be held meanwhile)."""
        if not await self.opens(held[0]):
            held.clear()
            return
        while held:
            await self.dispatch(held[0])
            held.pop(0)

    def parsed(self, line: bytes | None, number: int) -> Line | None:
        if line is None:
            self.error_frame(f"stdin line {number} is longer than {MAX_LINE} bytes; skipped")
            return None
        if not line.strip():
            return None
        try:
            return parse_line(line)
        except ValueError as exc:
            self.error_frame(f"stdin line {number} is unusable, ignored: {exc}")
            return None

    async def dispatch(self, message: Line) -> None:
        match message:
            case UserLine():
                blocks = prompt_blocks(message.message.content)
                if blocks:
                    blocks += self.take_images()
                echo = self.echo(message)
                if not blocks:
                    self.error_frame("user message without text or image content; ignored")
                elif self.running and not self.waiting:
                    await self.steer(blocks, echo)
                else:
                    await self.queue(blocks, echo)
            case ControlRequestLine() if message.request.subtype == "rewind_files":
                self.write(
                    await rewind_answer(self.service, self.session_id, self.checkpoints, message)
                )
            case ControlRequestLine():
                self.write(self.control_response(message))
            case ControlResponseLine():
                response = message.response
                pending = self._pending.get(response.request_id)
                if pending:
                    pending[1].append(response.model_dump(exclude_none=True))
                    pending[0].set()
            case IgnoredLine():
                pass
            case _:
                assert_never(message)

    async def queue(self, blocks: list[dict[str, Any]], echo: dict[str, Any]) -> None:
        """A turn of its own, after those already waiting; messages that come while any wait
        queue behind them rather than steer into the running turn ahead of them."""
        self.waiting += 1
        await self._send.send((blocks, echo))

    def take_images(self) -> list[dict[str, Any]]:
        images, self.options.images = self.options.images, []
        return images

    async def steer(self, blocks: list[dict[str, Any]], echo: dict[str, Any]) -> None:
        text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
        try:
            self.service.steer(self.session_id, text)
        except ServiceError:  # the turn is not taking messages (starting or ending)
            await self.queue(blocks, echo)
            return
        if self.options.replay_user:
            self.write(echo)  # folded into the running turn: taken now

    def echo(self, line: UserLine) -> dict[str, Any]:
        """The `--replay-user-messages` copy of a user message, written when a turn takes it."""
        return {
            "type": "user",
            "message": line.message.model_dump(exclude_none=True),
            "parent_tool_use_id": None,
            "session_id": self.session_id,
            "uuid": line.uuid or new_uuid(),
            "isReplay": True,
        }

    def state(self, state: str) -> None:
        if self.options.state_events:
            frame = {"type": "system", "subtype": "session_state_changed", "state": state}
            self.write({**frame, "session_id": self.session_id, "uuid": new_uuid()})

    def control_response(self, message: ControlRequestLine) -> dict[str, Any]:
        request_id, request = message.request_id, message.request
        subtype = request.subtype
        try:
            body = self.control(subtype, request)
        except ServiceError as exc:
            return control_error(request_id, str(exc))
        if body is None:
            return unsupported(request_id, subtype)
        return control_success(request_id, body)

    def control(self, subtype: str, request: ControlRequestBody) -> dict[str, Any] | None:
        if subtype == "initialize":
            extra, self.init_answer = self.init_answer, None
            if extra is None:
                late = too_late(request.model_dump(exclude_unset=True))
                self.notes += late.notes
                extra = late.answer
            offer = self.service.offer(self.session_id)
            info = self.service.describe(self.service.get(self.session_id))
            return {**initialize_answer(offer, info), **extra}
        if subtype == "interrupt":
            self.service.cancel(self.session_id)
            return {"still_queued": []}
        if subtype == "set_permission_mode":
            return self.set_mode(request.mode or "default")
        if subtype == "set_model":
            model = request.model or self.model
            self.service.set_model(self.session_id, model)
            self.model = model
            return {}
        if subtype == "set_max_thinking_tokens":
            self.thinking = thinking_options((request.model_extra or {}).get("max_thinking_tokens"))
            return {}
        if subtype == "mcp_status":
            from server.sessions.mcp import claude_statuses

            offer = self.service.offer(self.session_id)
            return {"mcpServers": claude_statuses(offer.mcp or [], detailed=True)}
        return None

    def set_mode(self, mode: str) -> dict[str, Any]:
        if mode == "auto":
            raise ServiceError(
                errors.INVALID_PARAMS, AUTO_REFUSED.replace("running in", "staying in")
            )
        try:
            own = session_mode(mode)
        except ValueError as exc:
            raise ServiceError(errors.INVALID_PARAMS, str(exc)) from None
        assert own is not None
        self.service.set_mode(self.session_id, own)
        self.dont_ask = mode == "dontAsk"
        return {}

    def mode_shown(self, current: str) -> str:
        return "dontAsk" if self.dont_ask and current == "default" else current

    def write_notes(self) -> None:
        """What the run was asked for and does not do, in one warning frame."""
        if not self.notes:
            return
        notes, self.notes = list(dict.fromkeys(self.notes)), []
        content = notes[0] if len(notes) == 1 else NOTES_HEAD + "".join(f"\n- {n}" for n in notes)
        self.write(
            {
                "type": "system",
                "subtype": "informational",
                "content": content,
                "level": "warning",
                "session_id": self.session_id,
                "uuid": new_uuid(),
            }
        )

    # -- turns ---------------------------------------------------------------------------

    async def turns(self) -> None:
        async with self._receive:
            async for blocks, echo in self._receive:
                self.waiting = max(0, self.waiting - 1)
                await self.turn(blocks, echo)

    async def turn(self, blocks: list[dict[str, Any]], echo: dict[str, Any] | None) -> None:
        session = self.service.get(self.session_id)
        info = self.service.describe(session)
        offer = self.service.offer(self.session_id)
        self.model = info.model
        self.write(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(session.cwd),
                "session_id": self.session_id,
                "tools": [cc_tool_name(name) for name in offer.tools],
                "mcp_servers": mcp_servers(offer),
                "model": info.model,
                "permissionMode": self.mode_shown(info.modes.current_mode_id),
                "slash_commands": [c.name for c in offer.commands],
                "apiKeySource": api_key_source(info.provider),
                "claude_code_version": DIALECT_VERSION,
                "output_style": "default",
                "agents": [p.name for p in profiles(offer)],
                "skills": [s.name for s in offer.skills.skills] if offer.skills else [],
                "plugins": [],
                "uuid": new_uuid(),
            }
        )
        self.write_notes()
        if echo and self.options.replay_user:
            self.write(echo)
        self.frames = TurnFrames(
            self.session_id,
            info.model,
            partial=self.options.partial,
            totals=self.usage,
            cwd=Path(session.cwd),
        )
        started = time.monotonic()
        self.running = True
        self.state("running")
        value, problem = None, None
        try:
            if self.over_budget:  # spent already: no model call
                outcome = PromptResult(
                    turn_id="", terminal="aborted", stop_reason="cancelled", usage=Usage()
                )
            else:
                outcome = await self.service.prompt(
                    PromptParams.model_validate(
                        {"sessionId": self.session_id, "prompt": blocks, "options": self.thinking}
                    )
                )
            if self.schema is not None:
                outcome, value, problem = await self.structured(outcome, self.schema)
        finally:
            self.running = False
        if echo and outcome.turn_id:
            self.checkpoints[echo["uuid"]] = outcome.turn_id
        result = self.frames.result(outcome, int((time.monotonic() - started) * 1000))
        if self.schema is not None and result["subtype"] == "success":
            result = with_structured(result, value, problem)
        if self.over_budget:
            result = budget_spent(result, self.budget or 0.0)
        self.frames = None
        self.last_result = result
        self.write(result)
        self.state("idle")
        self._turn_written.set()
        self._turn_written = anyio.Event()

    async def structured(self, outcome: Any, schema: dict[str, Any]) -> tuple[Any, Any, str | None]:
        """The turn's final answer checked against the schema, the model asked again (in the
        same turn) while it does not satisfy it: (outcome, value, why it does not)."""
        assert self.frames is not None
        for attempt in range(MAX_RETRIES + 1):
            if outcome.terminal != "completed" or outcome.stop_reason == "max_turn_requests":
                return outcome, None, None
            value, problem = checked(self.frames.last_text, schema)
            if problem is None or attempt == MAX_RETRIES:
                return outcome, value, problem
            self.usage.close_turn(self.model, outcome.usage)
            again = [{"type": "text", "text": retry_prompt(problem)}]
            outcome = await self.service.prompt(
                PromptParams.model_validate({"sessionId": self.session_id, "prompt": again})
            )
        return outcome, None, None

    def finish(self) -> int:
        result = self.last_result
        if result is None or self.options.input_format == "stream-json":
            return 0  # a host feeding turns reads each turn's outcome from its result frame
        fmt = self.options.output_format
        if fmt == "json":
            self.stdout.write(json.dumps(result, ensure_ascii=False).encode() + b"\n")
        elif fmt == "text":
            for line in refusal_lines(result, cwd=self.options.cwd, mode=self.options.mode):
                print(line, file=self.stderr, flush=True)
            text = result.get("result") or "; ".join(result.get("errors") or [])
            stream = self.stdout if not result["is_error"] else None
            if stream:
                stream.write(text.encode() + b"\n")
            else:
                print(f"agentls: {result['subtype']}: {text}", file=self.stderr, flush=True)
        self.stdout.flush()
        return exit_code(result, output_format=fmt)


NOTES_HEAD = "agentls does not do all this session asked for:"
FORK_REFUSED = (
    "--fork-session is not supported: agentls cannot copy a session, and resuming without it "
    "would change the original"
)
SIGNAL_GRACE = 30.0
"""How long a signalled process waits for its cancelled turn's `result`."""


def run_streamjson(options: StreamJsonOptions, service_factory) -> int:
    async def main() -> int:
        door = StreamJsonDoor(options, service_factory, sys.stdout.buffer)
        return await door.run(StdinChunks(sys.stdin.buffer))

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        return 130

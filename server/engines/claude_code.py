"""The `claude-code` engine: drives a Claude Code CLI (or anything speaking its stream-json
dialect, `agentls` included) as a session's engine.

Each session is one long-lived `claude -p --input-format stream-json --output-format stream-json`
process in its own process group; a turn is one user message and ends at its `result` frame.
Permission prompts arrive as `can_use_tool` control requests (`--permission-prompt-tool stdio`),
`AskUserQuestion` among them; cancel is an `interrupt` control request, and a CLI that does not
finish the turn within a short grace is killed with its group.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from protocol.methods import PermissionOption, ToolCallRef
from server.aio import run_to_end
from server.engines.base import EngineCapabilities, EngineError
from server.engines.claude_code_frames import FrameReader, cc_usage, questions_of, title_of
from server.engines.peer import ExternalEngine, PeerProcess, PeerTurn, peer_environment
from server.engines.skill_plugin import build_plugin, plugin_skills, remove_plugin
from server.permissions import MODES
from server.providers.messages import Usage
from server.skills import Skill, SkillCatalog
from server.tools.names import canonical_name
from server.trust import verdict
from server.turn import SessionSpec, TurnInput, TurnOutcome, TurnSink, UserNotReachable

log = logging.getLogger(__name__)

STREAM_FLAGS = [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--permission-prompt-tool",
    "stdio",
]
OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Deny", kind="reject_once"),
]
STOP_REASONS = ("end_turn", "max_tokens", "refusal")


@dataclass
class CcSession:
    """One session of the `claude-code` engine: the CLI process and what it last told us."""

    spec: SessionSpec
    peer: PeerProcess
    model: str = "default"
    mode: str = "default"
    turn: PeerTurn | None = None
    frames: FrameReader | None = None
    result: asyncio.Future | None = None
    pending: dict[str, str] = field(default_factory=dict)
    controls: dict[str, asyncio.Future] = field(default_factory=dict)
    reader: asyncio.Task | None = None
    plugin: Path | None = None
    """The folder that hands agentls's skills to the CLI (`--plugin-dir`)."""
    broken: str | None = None
    claude_id: str | None = None
    """Claude Code's own id of the conversation (from `system/init`), for `--resume`."""
    ids: Any = field(default_factory=lambda: itertools.count(1))

    def write(self, frame: dict[str, Any]) -> None:
        data = json.dumps(frame, ensure_ascii=False, separators=(",", ":")) + "\n"
        self.peer.stdin.write(data.encode())

    async def control(self, request: dict[str, Any], *, timeout: float = 30.0) -> dict[str, Any]:
        request_id = f"agentls_{next(self.ids)}"
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self.controls[request_id] = future
        self.write({"type": "control_request", "request_id": request_id, "request": request})
        try:
            with anyio.fail_after(timeout):
                response = await future
        finally:
            self.controls.pop(request_id, None)
        if response.get("subtype") == "error":
            raise EngineError(f"{request.get('subtype')} failed: {response.get('error')}")
        return response.get("response") or {}


class ClaudeCodeEngine(ExternalEngine):
    """Runs each session in a Claude Code CLI over stream-json."""

    id = "claude-code"
    capabilities = EngineCapabilities(images=True, thinking=False, steer=False)
    resume_key = "claudeSessionId"
    default_cancel_grace = 3.0

    def snapshot(self, handle: CcSession, *, since: int = 0) -> dict[str, Any]:
        """Claude Code keeps the conversation; resuming needs its session id."""
        return {**self.describe(handle), "claudeSessionId": handle.claude_id}

    async def _start(self, spec: SessionSpec, *, resume: str | None) -> CcSession:
        if not self.settings.command:
            raise EngineError(
                "the claude-code engine needs a command (engines.claude-code.command)"
            )
        if spec.mode not in MODES:
            raise EngineError(f"unknown mode {spec.mode!r}; modes: {', '.join(MODES)}")
        argv = [*self.settings.command, *STREAM_FLAGS, "--permission-mode", spec.mode]
        if self.settings.model:
            argv += ["--model", self.settings.model]
        if resume:
            argv += ["--resume", resume]
        env = peer_environment(self._environ, self.settings.env)
        plugin = build_plugin(self.plugin_skills(spec, env))
        if plugin is not None:
            argv += ["--plugin-dir", str(plugin)]
        try:
            peer = await PeerProcess.spawn(
                argv, cwd=spec.cwd, env=env, name=self.settings.command[0]
            )
        except BaseException:
            remove_plugin(plugin)
            raise
        handle = CcSession(
            spec=spec,
            peer=peer,
            mode=spec.mode,
            model=self.settings.model or "default",
            plugin=plugin,
        )
        handle.claude_id = resume
        handle.reader = asyncio.get_running_loop().create_task(self._read(handle))
        try:
            await handle.control(
                {"subtype": "initialize", "hooks": None}, timeout=self.start_timeout
            )
        except (EngineError, TimeoutError, OSError) as exc:
            await self._discard(handle, force=True)
            raise EngineError(f"Claude Code did not start ({exc}); {peer.exit_reason()}") from exc
        self._live.append(handle)
        return handle

    def plugin_skills(self, spec: SessionSpec, env: dict[str, str]) -> list[Skill]:
        """The skills Claude Code would not find by itself (`server.engines.skill_plugin`)."""
        home = Path(env.get("HOME") or Path.home())
        catalog = SkillCatalog(spec.cwd, home=home, environ=env)
        trusted, _ = verdict(spec.config)
        return plugin_skills(catalog.skills, spec.cwd, home, trusted=trusted)

    # -- the reader --------------------------------------------------------------------------

    async def _read(self, handle: CcSession) -> None:
        try:
            while line := await handle.peer.stdout.readline():
                try:
                    frame = json.loads(line)
                except ValueError:
                    log.debug("claude-code: not JSON: %r", line[:200])
                    continue
                if isinstance(frame, dict):
                    self._on_frame(handle, frame)
        finally:
            gone = ConnectionError(handle.peer.exit_reason())
            for future in [*handle.controls.values(), handle.result]:
                if future is not None and not future.done():
                    future.set_exception(gone)

    def _on_frame(self, handle: CcSession, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "control_response":
            response = frame.get("response") or {}
            future = handle.controls.get(response.get("request_id", ""))
            if future is not None and not future.done():
                future.set_result(response)
        elif kind == "control_request":
            self._answer_later(handle, frame)
        elif kind == "system" and frame.get("subtype") == "init":
            handle.model = frame.get("model") or handle.model
            handle.claude_id = frame.get("session_id") or handle.claude_id
        elif kind == "result":
            if handle.result is not None and not handle.result.done():
                handle.result.set_result(frame)
        elif handle.turn is not None and handle.frames is not None:
            for event in handle.frames.on_frame(frame):
                handle.turn.sink.emit(event)

    def _answer_later(self, handle: CcSession, frame: dict[str, Any]) -> None:
        request_id, request = frame.get("request_id"), frame.get("request") or {}

        async def answer() -> None:
            body = await self._can_use_tool(handle, request)
            response = {"subtype": "success", "request_id": request_id, "response": body}
            if body is None:
                error = f"unsupported control request {request.get('subtype')!r}"
                response = {"subtype": "error", "request_id": request_id, "error": error}
            with contextlib.suppress(OSError, RuntimeError):
                handle.write({"type": "control_response", "response": response})

        asyncio.get_running_loop().create_task(answer())

    async def _can_use_tool(self, handle: CcSession, request: dict[str, Any]) -> dict | None:
        if request.get("subtype") != "can_use_tool":
            return None
        turn, frames = handle.turn, handle.frames
        if turn is None or frames is None:
            return {"behavior": "deny", "message": "no turn is running"}
        name = str(request.get("tool_name") or "")
        raw = request.get("input")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if name == "AskUserQuestion":
            return await self._ask(turn, args)
        call_id = str(request.get("tool_use_id") or "")
        ref = ToolCallRef(
            tool_call_id=call_id,
            name=canonical_name(name),
            title=title_of(name, args),
            input=args,
            reason=request.get("decision_reason") or None,
        )
        reply = await turn.interact(lambda: turn.sink.request_permission(ref, OPTIONS))
        chosen = None
        if (
            reply is not None
            and not isinstance(reply, Exception)
            and reply.outcome.outcome == "selected"
        ):
            chosen = reply.outcome.option_id
        if chosen in ("allow_once", "allow_always"):
            body = {"behavior": "allow", "updatedInput": reply.updated_input or args}
            if chosen == "allow_always" and request.get("permission_suggestions"):
                body["updatedPermissions"] = request["permission_suggestions"]
            return body
        frames.denied.add(call_id)
        message = getattr(reply, "message", None) or "The user denied this tool call."
        return {"behavior": "deny", "message": message}

    async def _ask(self, turn: PeerTurn, args: dict[str, Any]) -> dict[str, Any]:
        questions = questions_of(args)
        reply = await turn.interact(
            lambda: turn.sink.ask_question(questions, timeout=turn.question_timeout)
        )
        if isinstance(reply, UserNotReachable):
            return {"behavior": "deny", "message": "No user can answer; proceed on your own."}
        if reply is None or isinstance(reply, Exception) or reply.declined or not reply.answers:
            return {"behavior": "deny", "message": "The user declined to answer."}
        return {"behavior": "allow", "updatedInput": {**args, "answers": reply.answers}}

    # -- turns -------------------------------------------------------------------------------

    async def run_turn(self, handle: CcSession, turn: TurnInput, sink: TurnSink) -> TurnOutcome:
        if handle.broken or not handle.peer.running:
            raise EngineError(handle.broken or handle.peer.exit_reason())
        if turn.model:
            self.set_model(handle, turn.model)
        await self._apply_pending(handle)
        handle.frames = FrameReader()
        handle.result = asyncio.get_running_loop().create_future()
        timeout = float((handle.spec.config.get("questions") or {}).get("timeout", 60))
        try:
            async with anyio.create_task_group() as tg:
                handle.turn = PeerTurn(sink, tg, question_timeout=timeout)
                frame = await self._exchange(handle, turn)
                if isinstance(frame, dict):
                    for event in handle.frames.finish():
                        sink.emit(event)
                tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            await run_to_end(self._interrupt(handle))
            raise
        finally:
            handle.turn = None
        if isinstance(frame, Exception):
            raise EngineError(str(frame)) from frame
        return outcome(frame)

    async def _exchange(self, handle: CcSession, turn: TurnInput) -> dict[str, Any] | Exception:
        """The turn's `result` frame, or why there is none (errors stay out of the task group)."""
        assert handle.result is not None
        try:
            handle.write(user_message(turn))
            return await asyncio.shield(handle.result)
        except (ConnectionError, OSError, RuntimeError) as exc:
            return exc

    async def _interrupt(self, handle: CcSession) -> None:
        result = handle.result
        with anyio.move_on_after(self.cancel_grace):
            with contextlib.suppress(Exception):
                await handle.control({"subtype": "interrupt"}, timeout=self.cancel_grace)
                if result is not None:
                    await asyncio.shield(result)
        if result is not None and not result.done():
            handle.broken = (
                f"Claude Code did not stop within {self.cancel_grace:g} s of an interrupt and was "
                "killed; start a new session"
            )
            log.warning("%s (pid %s)", handle.broken, handle.peer.pid)
            await self._discard(handle, force=True)

    async def _apply_pending(self, handle: CcSession) -> None:
        pending, handle.pending = handle.pending, {}
        if "model" in pending:
            await handle.control({"subtype": "set_model", "model": pending["model"]})
        if "mode" in pending:
            await handle.control({"subtype": "set_permission_mode", "mode": pending["mode"]})

    # -- settings ----------------------------------------------------------------------------

    def set_model(self, handle: CcSession, model: str) -> None:
        handle.pending["model"] = model
        handle.model = model

    def set_mode(self, handle: CcSession, mode: str) -> None:
        if mode not in MODES:
            raise EngineError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        handle.pending["mode"] = mode
        handle.mode = mode

    def describe(self, handle: CcSession) -> dict[str, str]:
        return {"provider": "claude-code", "model": handle.model, "mode": handle.mode}

    # -- lifetime ----------------------------------------------------------------------------

    async def abort(self, handle: CcSession) -> None:
        with contextlib.suppress(Exception):
            await handle.control({"subtype": "interrupt"}, timeout=self.cancel_grace)

    async def _close(self, handle: CcSession) -> None:
        await self._discard(handle)

    async def _discard(self, handle: CcSession, *, force: bool = False) -> None:
        if force:
            handle.peer.kill()
        try:
            await handle.peer.close(grace=2.0)
        finally:
            remove_plugin(handle.plugin)
            handle.plugin = None
        if handle.reader is not None:
            handle.reader.cancel()


def user_message(turn: TurnInput) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    for image in turn.images:
        source = {"type": "base64", "media_type": image.mime_type, "data": image.base64}
        content.append({"type": "image", "source": source})
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        "session_id": "",
    }


def outcome(frame: dict[str, Any]) -> TurnOutcome:
    subtype = frame.get("subtype")
    usage = Usage(**cc_usage(frame.get("usage")).model_dump())
    if subtype == "error_max_turns":
        return TurnOutcome(stop_reason="max_turn_requests", usage=usage)
    if frame.get("is_error") or subtype != "success":
        errors = frame.get("errors") or [frame.get("result") or subtype]
        raise EngineError(f"Claude Code failed the turn: {'; '.join(map(str, errors))}")
    stop = frame.get("stop_reason")
    return TurnOutcome(stop_reason=stop if stop in STOP_REASONS else "end_turn", usage=usage)

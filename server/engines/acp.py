"""The `acp` engine: drives any external ACP agent (`gemini --acp`, `opencode acp`, `qwen --acp`,
claude-agent-acp, codex-acp, or `agentls acp` itself) as a session's engine.

Each session has its own agent process (own process group, explicit environment, stderr drained)
and one ACP session in it. A cancelled turn sends `session/cancel` and waits a short grace for the
agent's `cancelled` answer; an agent that does not answer in time is killed with its whole group.
Closing a session kills the group too. agentls's skills reach the agent as slash commands: a
prompt `/name args` goes to it as the skill's text (their `allowed-tools` cannot apply there).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from protocol.updates import AgentMessageChunk, StepFinish, StopReason
from protocol.updates import Usage as WireUsage
from server import __version__
from server.aio import run_to_end
from server.engines.base import Command, EngineCapabilities, EngineError, SessionOffer
from server.engines.peer import ExternalEngine, PeerProcess, PeerTurn, peer_environment
from server.permissions import MODES
from server.providers.messages import Usage
from server.skills import SkillCatalog, expand_command
from server.turn import SessionSpec, TurnInput, TurnOutcome, TurnSink

if TYPE_CHECKING:
    from server.engines.acp_peer import PeerClient, PeerState

log = logging.getLogger(__name__)

# Our permission modes and the ids other agents use for the same thing.
MODE_ALIASES = {
    "default": ("default",),
    "plan": ("plan",),
    "acceptEdits": ("acceptEdits", "autoEdit", "auto_edit", "auto-edit"),
    "bypassPermissions": ("bypassPermissions", "yolo", "bypass"),
}
STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")


@dataclass
class AcpSession:
    """One session of the `acp` engine: the agent process, the connection and its session."""

    spec: SessionSpec
    peer: PeerProcess
    conn: Any
    client: PeerClient
    remote_id: str
    agent: str
    modes: list[str] = field(default_factory=list)
    mode: str = "default"
    model: str = "default"
    images: bool = False
    pending: dict[str, str] = field(default_factory=dict)
    """Mode and model changes to send before the next prompt."""
    broken: str | None = None
    skills: SkillCatalog | None = None
    """agentls's skills: a prompt `/name args` reaches the agent as the skill's text."""

    @property
    def state(self) -> PeerState:
        return self.client.state


class AcpEngine(ExternalEngine):
    """Runs each session in an external ACP agent."""

    id = "acp"
    capabilities = EngineCapabilities(images=True, thinking=False, steer=False, skills=True)
    resume_key = "remoteSessionId"

    def snapshot(self, handle: AcpSession, *, since: int = 0) -> dict[str, Any]:
        """The agent keeps the conversation; resuming needs its session id."""
        return {**self.describe(handle), "remoteSessionId": handle.remote_id}

    async def _start(self, spec: SessionSpec, *, resume: str | None) -> AcpSession:
        command = self.settings.command
        if not command:
            raise EngineError(
                "the acp engine needs the agent's command: pass --engine-command "
                "'gemini --acp' (or set engines.acp.command in the user config)"
            )
        if spec.mode not in MODES:
            raise EngineError(f"unknown mode {spec.mode!r}; modes: {', '.join(MODES)}")
        # The SDK costs about a second to import: only sessions of this engine pay for it.
        import acp

        from server.engines.acp_peer import PeerClient

        env = peer_environment(self._environ, self.settings.env)
        peer = await PeerProcess.spawn(command, cwd=spec.cwd, env=env, name=command[0])
        client = PeerClient()
        # PeerClient implements part of acp.Client; the SDK answers the rest "method not found".
        conn = acp.connect_to_agent(
            client,  # type: ignore[arg-type]
            peer.stdin,
            peer.stdout,
            use_unstable_protocol=True,
        )
        try:
            with anyio.fail_after(self.start_timeout):
                session = await self._open(spec, peer, conn, client, resume)
        except Exception as exc:
            await self._discard(conn, peer, force=True)
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise EngineError(
                f"the ACP agent could not start a session ({reason}); {peer.exit_reason()}"
            ) from exc
        home = Path(env.get("HOME") or Path.home())
        session.skills = await anyio.to_thread.run_sync(
            lambda: SkillCatalog(spec.cwd, home=home, environ=env)
        )
        self._live.append(session)
        if spec.mode != session.mode:
            try:
                self.set_mode(session, spec.mode)
            except EngineError:
                await self.close_session(session)
                raise
        return session

    async def _open(
        self,
        spec: SessionSpec,
        peer: PeerProcess,
        conn: Any,
        client: PeerClient,
        resume: str | None,
    ) -> AcpSession:
        from acp import PROTOCOL_VERSION, schema

        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(
                elicitation=schema.ElicitationCapabilities(
                    form=schema.ElicitationFormCapabilities()
                )
            ),
            client_info=schema.Implementation(name="agentls", version=__version__),
        )
        info = init.agent_info
        caps = init.agent_capabilities or schema.AgentCapabilities()
        if resume and caps.load_session:
            # The agent replays the conversation as updates; no turn is running, so they drop.
            new = await conn.load_session(cwd=str(spec.cwd), session_id=resume, mcp_servers=[])
            remote_id = resume
        else:
            new = await conn.new_session(cwd=str(spec.cwd), mcp_servers=[])
            remote_id = new.session_id
        client.state.set_options(new.config_options)
        session = AcpSession(
            spec=spec,
            peer=peer,
            conn=conn,
            client=client,
            remote_id=remote_id,
            agent=info.name if info else peer.name,
            images=bool(caps.prompt_capabilities and caps.prompt_capabilities.image),
        )
        if new.modes is not None:
            session.modes = [m.id for m in new.modes.available_modes]
            client.state.mode = new.modes.current_mode_id
        session.mode = our_mode(client.state.mode) or spec.mode
        session.model = current_model(client.state) or session.model
        return session

    # -- turns ------------------------------------------------------------------------------

    async def run_turn(self, handle: AcpSession, turn: TurnInput, sink: TurnSink) -> TurnOutcome:
        if handle.broken:
            raise EngineError(handle.broken)
        if turn.model:
            self.set_model(handle, turn.model)
        await self._apply_pending(handle)
        text, notice = await anyio.to_thread.run_sync(skill_text, handle, turn.text)
        if notice:
            sink.emit(AgentMessageChunk(text=notice))
        blocks = prompt_blocks(text, turn, handle)
        prompt = asyncio.ensure_future(
            handle.conn.prompt(session_id=handle.remote_id, prompt=blocks)
        )
        timeout = float((handle.spec.config.get("questions") or {}).get("timeout", 60))
        try:
            async with anyio.create_task_group() as tg:
                handle.state.turn = PeerTurn(sink, tg, question_timeout=timeout)
                try:
                    result = await settle(prompt)
                except anyio.get_cancelled_exc_class():
                    await run_to_end(self._send_cancel(handle))
                    raise
                tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            await run_to_end(self._await_cancelled(handle, prompt))
            raise
        finally:
            handle.state.turn = None
        return self._outcome(handle, result, sink)

    def offers(self, handle: AcpSession) -> SessionOffer:
        """agentls's skills, as slash commands; the agent's own tools and commands are its own."""
        if handle.skills is None:
            return SessionOffer()
        commands = [Command(s.name, s.description) for s in handle.skills.commands()]
        return SessionOffer(commands=commands, skills=handle.skills)

    def _outcome(self, handle: AcpSession, result: Any, sink: TurnSink) -> TurnOutcome:
        if isinstance(result, Exception):
            if not handle.peer.running:
                raise EngineError(handle.peer.exit_reason())
            raise EngineError(f"{handle.agent} failed the turn: {result}")
        stop: StopReason = result.stop_reason if result.stop_reason in STOP_REASONS else "end_turn"
        usage = peer_usage(result.usage)
        # ACP shows no model calls inside a turn: the agent's whole turn is its one step.
        sink.emit(StepFinish(step=1, finish_reason=stop, usage=WireUsage(**vars(usage))))
        return TurnOutcome(stop_reason=stop, usage=usage)

    async def _send_cancel(self, handle: AcpSession) -> None:
        with contextlib.suppress(Exception):
            await handle.conn.cancel(session_id=handle.remote_id)

    async def _await_cancelled(self, handle: AcpSession, prompt: asyncio.Future) -> None:
        with anyio.move_on_after(self.cancel_grace):
            with contextlib.suppress(Exception):
                await asyncio.shield(prompt)
        if not prompt.done():
            prompt.cancel()
            handle.broken = (
                f"{handle.agent} did not stop within {self.cancel_grace:g} s of a cancel and was "
                "killed; start a new session"
            )
            log.warning("%s (pid %s)", handle.broken, handle.peer.pid)
            await self._discard(handle.conn, handle.peer, force=True)

    async def _apply_pending(self, handle: AcpSession) -> None:
        pending, handle.pending = handle.pending, {}
        try:
            for key, value in pending.items():
                await self._send_setting(handle, key, value)
        except Exception as exc:
            raise EngineError(f"{handle.agent} refused to switch {key} to {value}: {exc}") from exc

    async def _send_setting(self, handle: AcpSession, key: str, value: str) -> None:
        option = option_of(handle.state, key)
        if option is not None:
            response = await handle.conn.set_config_option(
                config_id=option.id, session_id=handle.remote_id, value=value
            )
            handle.state.set_options(response.config_options if response else None)
        elif key == "mode":
            await handle.conn.set_session_mode(mode_id=value, session_id=handle.remote_id)
            handle.state.mode = value

    # -- settings ---------------------------------------------------------------------------

    def set_model(self, handle: AcpSession, model: str) -> None:
        option = option_of(handle.state, "model")
        if option is None:
            raise EngineError(f"{handle.agent} does not offer a choice of model")
        values = option_values(option)
        if model not in values:
            raise EngineError(f"{handle.agent} has no model {model!r}; models: {', '.join(values)}")
        handle.pending["model"] = model
        handle.model = model

    def set_mode(self, handle: AcpSession, mode: str) -> None:
        if mode not in MODES:
            raise EngineError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        option = option_of(handle.state, "mode")
        offered = option_values(option) if option else handle.modes
        target = next((m for m in MODE_ALIASES[mode] if m in offered), None)
        if target is None:
            raise EngineError(
                f"{handle.agent} has no mode like {mode!r}; its modes: {', '.join(offered) or 'none'}"
            )
        handle.pending["mode"] = target
        handle.mode = mode

    def describe(self, handle: AcpSession) -> dict[str, str]:
        return {"provider": handle.agent, "model": handle.model, "mode": handle.mode}

    # -- lifetime ---------------------------------------------------------------------------

    async def abort(self, handle: AcpSession) -> None:
        await self._send_cancel(handle)

    async def _close(self, handle: AcpSession) -> None:
        await self._discard(handle.conn, handle.peer)

    async def _discard(self, conn: Any, peer: PeerProcess, *, force: bool = False) -> None:
        """Stop the agent: end of input and a grace to clean up, or at once when `force`; its
        process group is killed either way."""
        if force:
            peer.kill()
        with contextlib.suppress(Exception):
            await conn.close()
        await peer.close(grace=2.0)


async def settle(prompt: asyncio.Future) -> Any:
    """The prompt's response, or the exception it failed with; a cancelled caller leaves the
    request running (the agent still owes its `cancelled` answer)."""
    from acp import RequestError

    try:
        return await asyncio.shield(prompt)
    except (RequestError, ConnectionError, OSError) as exc:
        return exc


def skill_text(handle: AcpSession, text: str) -> tuple[str, str | None]:
    """A prompt `/name args` as the skill's text, and what the user is told about it: the
    agent runs its own tools under its own rules, so what the skill's `allowed-tools` would
    allow is not allowed there."""
    if handle.skills is None:
        return text, None
    handle.skills.refresh()
    expanded = expand_command(text, handle.skills)
    if expanded is None:
        return text, None
    text, skill = expanded
    if not skill.allowed_tools:
        return text, None
    return text, (
        f"(agentls: the allowed-tools of skill {skill.name} ({', '.join(skill.allowed_tools)}) "
        f"cannot apply in {handle.agent}, which asks for its tools as it always does.)\n\n"
    )


def prompt_blocks(text: str, turn: TurnInput, handle: AcpSession) -> list[Any]:
    from acp import schema

    blocks: list[Any] = [schema.TextContentBlock(type="text", text=text)] if text else []
    for image in turn.images:
        if not handle.images:
            raise EngineError(f"{handle.agent} does not accept images")
        blocks.append(
            schema.ImageContentBlock(type="image", data=image.base64, mime_type=image.mime_type)
        )
    return blocks


def peer_usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cached_read_tokens or 0,
        cache_write_tokens=usage.cached_write_tokens or 0,
    )


def option_of(state: PeerState, category: str) -> Any:
    for option in state.options.values():
        if option.category == category or option.id == category:
            return option
    return None


def option_values(option: Any) -> list[str]:
    values: list[str] = []
    for item in option.options:
        grouped = getattr(item, "options", None)  # a SessionConfigSelectGroup
        if grouped is None:
            values.append(item.value)
        else:
            values.extend(o.value for o in grouped)
    return values


def current_model(state: PeerState) -> str | None:
    option = option_of(state, "model")
    return option.current_value if option else None


def our_mode(peer_mode: str | None) -> str | None:
    return next((ours for ours, ids in MODE_ALIASES.items() if peer_mode in ids), None)

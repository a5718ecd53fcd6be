"""The native engine: agentls's own agent loop (`server.agent`) over a provider and the built-in
tools, behind the engine contract. Each session's state is a `server.agent.state.AgentSession`.

Prompt commands (`/model`, `/<skill>`) are handled before the loop (`server.agent.prompt_commands`),
so they work in every front door.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from server.agent import prompt_images
from server.agent.delegation import Background, Delegation
from server.agent.instructions import Instructions
from server.agent.loop import run_turn
from server.agent.profiles import Profile, ProfileRegistry, client_profiles
from server.agent.prompt_commands import prompt_message
from server.agent.snapshot import apply_native_snapshot, native_snapshot
from server.agent.state import AgentSession
from server.agent.task import task_tools
from server.engines.base import Command, EngineCapabilities, EngineError, SessionOffer
from server.logs import data_dir, warn_once
from server.mcp.engine import McpSupport
from server.permissions import MODES, PermissionState, rules_from_names, trust_notice
from server.policy import shell as shell_policy
from server.providers import images, thinking
from server.providers.base import ProviderFactory, ProviderSettings
from server.providers.messages import Message, TextPart, Usage
from server.providers.registry import (
    ProviderConfigError,
    create_provider,
    prefetch,
    resolve_settings,
    sdk_imported,
)
from server.providers.retry import RetryPolicy
from server.skills import (
    SkillCatalog,
)
from server.tools.base import FileAccess, Tool, ToolContext
from server.tools.checkpoint_store import Checkpoints
from server.tools.names import disallowed
from server.tools.sandbox import make_sandbox
from server.trust import is_broad
from server.turn import SessionSpec, TurnInput, TurnOutcome, TurnSink

log = logging.getLogger(__name__)

MODEL_COMMAND = Command("model", "Switch the model: /model <id> [prompt]", "<model id> [prompt]")
TODO_COMMAND = Command("todo", "Show the todo list; /todo clear empties it", "[clear]")


WHILE_TYPING_AFTER_S = 0.2
"""How long after a session is made (its `session/new` reply out) it prepares, while the user
types the first prompt, what that prompt's turn would otherwise make first: the tools' input
schemas (milliseconds each, once per process) and the shell parser (~0.1 s of CPU, on the
background thread). A prompt that came first (a one-shot run's) makes them itself, as needed:
a run that never runs a command never imports the parser."""


def _while_typing(session: AgentSession) -> None:
    if session.prompted or session.closed:
        return
    if "bash" in session.tools:
        shell_policy.warm()
    try:
        session.tool_specs()
    except Exception:  # the first model call builds them again and reports it
        log.debug("tool schemas", exc_info=True)


class NativeEngine:
    """Runs sessions with the built-in loop. `provider_factory` is the seam tests use."""

    id = "native"
    capabilities = EngineCapabilities()

    def __init__(
        self,
        *,
        provider_factory: ProviderFactory = create_provider,
        tools: Callable[[], list[Tool]] | None = None,
        environ: dict[str, str] | None = None,
    ):
        self._factory = provider_factory
        self._tools = tools
        self._environ = environ
        self._jobs: Any = None
        self._mcp = McpSupport()
        self._unbuilt: set[ProviderSettings] = set()

    @property
    def environ(self) -> dict[str, str] | None:
        """The environment its sessions use in place of this process's (None: the process's)."""
        return self._environ

    async def start(self) -> None:
        return None

    async def create_session(self, spec: SessionSpec) -> AgentSession:
        try:
            settings = resolve_settings(spec.config.get("llm", {}), self._environ)
        except ProviderConfigError as exc:
            raise EngineError(str(exc)) from exc
        prefetch(settings)
        if spec.mode not in MODES:
            raise EngineError(f"unknown mode {spec.mode!r}; modes: {', '.join(MODES)}")
        home = Path(self._env().get("HOME") or Path.home())
        skills = SkillCatalog(spec.cwd, home=home, environ=self._env())
        tools = self._tools() if self._tools else self._builtin_tools(spec, skills)
        allowed = rules_from_names(spec.config.get("permissions", {}).get("allow", []))
        try:
            sandbox = make_sandbox(spec.config, spec.cwd, self._env())
        except ValueError as exc:
            raise EngineError(str(exc)) from exc
        if sandbox.missing:
            warn_once(log, sandbox.missing, "commands run without a sandbox: %s", sandbox.missing)
        session = AgentSession(
            spec=spec,
            settings=settings,
            tools={t.name: t for t in tools},
            tool_ctx=ToolContext(
                cwd=spec.cwd,
                session_id=spec.session_id,
                config=spec.config,
                sandbox=sandbox,
                environ=self._environ,
                checkpoints=Checkpoints(data_dir(self._environ) / "checkpoints", spec.session_id),
            ),
            permissions=PermissionState(mode=spec.mode, allow_rules=allowed),
            factory=self._factory,
            max_steps=int(spec.config.get("maxSteps", 100)),
            approval_timeout=float(spec.config.get("permissions", {}).get("approvalTimeout", 120)),
            retry=RetryPolicy(max_retries=settings.max_retries),
            skills=skills,
            delegation=Delegation(
                ProfileRegistry(
                    spec.cwd, home=home, extra=client_profiles(spec.config.get("sdkAgents"))
                )
            ),
            background=Background(spec.host),
            instructions=Instructions.from_config(spec.cwd, home, spec.config),
            environ=self._environ,
        )
        broad = is_broad(spec.cwd, home)
        notice = trust_notice(spec.cwd, spec.config, skills, broad=broad)
        session.notices.extend(filter(None, [notice]))
        if not self._tools:
            self._add_task_tools(session)
        profile = self._profile(session, spec.subagent) if spec.subagent else None
        await self._mcp.open(session)
        if profile:
            self._run_as(session, profile)
        prefetch(settings, then=lambda: self._build_provider(session))
        asyncio.get_running_loop().call_later(WHILE_TYPING_AFTER_S, _while_typing, session)
        return session

    def _build_provider(self, session: AgentSession) -> None:
        """The session's provider, built on the loop once its SDK is in (its client's TLS
        context alone is tens of milliseconds) while the user types. A provider that cannot be
        built is left to the first model call, which reports why; settings that failed once are
        not tried again here."""
        if session.closed or session.settings in self._unbuilt:
            return
        if not sdk_imported(session.settings):  # switched to another provider meanwhile
            prefetch(session.settings, then=lambda: self._build_provider(session))
            return
        try:
            session.provider()
        except Exception:
            self._unbuilt.add(session.settings)
            log.debug("provider not built ahead", exc_info=True)

    async def attach_mcp_servers(self, handle: AgentSession, servers: dict[str, Any]) -> None:
        """Start MCP servers a client passed for this session and add their tools."""
        await self._mcp.attach(handle, servers)

    async def run_turn(self, handle: AgentSession, turn: TurnInput, sink: TurnSink) -> TurnOutcome:
        handle.prompted = True
        if handle.mcp is not None:
            handle.mcp.flush(sink)
        notices, handle.notices = handle.notices, []
        for notice in notices:
            sink.emit(notice)
        if turn.model:
            self.set_model(handle, turn.model, reason="prompt options")
        handle.prompt_options = turn.provider_options
        if turn.origin == "report":
            await anyio.to_thread.run_sync(handle.begin_turn)
            return await run_turn(handle, Message("user", [TextPart(turn.text)]), sink)
        environ = self._env()
        # An unusable image raises `ImageError`: this turn fails, the session keeps serving.
        text, pictures = await anyio.to_thread.run_sync(
            lambda: prompt_images.collect(
                turn,
                cwd=handle.spec.cwd,
                home=Path(environ.get("HOME") or Path.home()),
                detect=images.auto_detect_enabled(environ),
            )
        )
        handle.think = thinking.choose(turn.think, turn.thinking_budget, handle.llm)
        await anyio.to_thread.run_sync(handle.begin_turn)
        try:
            user = await prompt_message(handle, text, pictures, turn.images_first, sink)
        except ProviderConfigError as exc:
            raise EngineError(str(exc)) from exc
        if user is None:
            return TurnOutcome("end_turn", Usage())
        try:
            return await run_turn(handle, user, sink)
        finally:
            handle.end_skill_model()

    def steer(self, handle: AgentSession, text: str) -> None:
        handle.steers.append(text)

    def unsent_steers(self, handle: AgentSession) -> list[str]:
        """At a turn's end: the steers it did not take (the client is told, to resend them)."""
        left, handle.steers = handle.steers, []
        return left

    def set_model(self, handle: AgentSession, model: str, *, reason: str = "set_model") -> None:
        try:
            handle.switch_model(model, reason=reason)
        except ProviderConfigError as exc:
            raise EngineError(str(exc)) from exc

    def set_mode(self, handle: AgentSession, mode: str) -> None:
        if mode not in MODES:
            raise EngineError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        handle.permissions.mode = mode

    def offers(self, handle: AgentSession) -> SessionOffer:
        skills = handle.skills
        commands = [MODEL_COMMAND, TODO_COMMAND]
        commands += [Command(s.name, s.description) for s in skills.commands()] if skills else []
        delegation = handle.delegation

        def use_editor_files(files: FileAccess) -> None:
            handle.tool_ctx.files = files

        return SessionOffer(
            tools=list(handle.tools),
            commands=commands,
            skills=skills,
            profiles=delegation.registry if delegation else None,
            mcp=handle.mcp.describe() if handle.mcp is not None else None,
            background=handle.background,
            use_editor_files=use_editor_files,
        )

    def describe(self, handle: AgentSession) -> dict[str, str]:
        return {
            "provider": handle.settings.provider,
            "model": handle.settings.model,
            "mode": handle.permissions.mode,
        }

    def snapshot(self, handle: AgentSession, *, since: int = 0) -> dict[str, Any]:
        return native_snapshot(handle, since=since)

    async def restore(self, spec: SessionSpec, snapshot: dict[str, Any]) -> AgentSession:
        handle = await self.create_session(spec)
        apply_native_snapshot(handle, snapshot)
        return handle

    async def abort(self, handle: AgentSession) -> None:
        return None

    async def close_session(self, handle: AgentSession) -> None:
        handle.closed = True
        await handle.background.close()
        if self._jobs is not None:
            self._jobs.close_session(handle.spec.session_id)
        await self._mcp.close(handle)
        if handle.tool_ctx.sandbox is not None:
            handle.tool_ctx.sandbox.close()
        log.debug(
            "session %s used %s (about $%.4f)",
            handle.spec.session_id,
            handle.usage,
            handle.cost_usd,
        )

    async def dispose(self) -> None:
        if self._jobs is not None:
            self._jobs.close()
        await self._mcp.dispose()

    def _env(self) -> dict[str, str] | os._Environ[str]:
        return os.environ if self._environ is None else self._environ

    def _builtin_tools(self, spec: SessionSpec, skills: SkillCatalog) -> list[Tool]:
        from server.tools.registry import builtin_tools
        from server.tools.shell import BackgroundJobs

        if self._jobs is None:
            self._jobs = BackgroundJobs()
        return builtin_tools(jobs=self._jobs, config=spec.config, skills=skills, search=spec.search)

    def _add_task_tools(self, session: AgentSession) -> None:
        off = disallowed(session.spec.config)
        session.tools.update({n: t for n, t in task_tools(session).items() if n not in off})

    def _profile(self, session: AgentSession, name: str) -> Profile:
        assert session.delegation is not None
        profile = session.delegation.registry.get(name)
        if profile is None:
            known = session.delegation.registry.names()
            raise EngineError(f"unknown subagent profile {name!r}; profiles: {known}")
        return profile

    def _run_as(self, session: AgentSession, profile: Profile) -> None:
        """A session started as a subagent profile: its tools, step cap, prompt and model."""
        assert session.delegation is not None
        session.tools = {n: t for n, t in session.tools.items() if profile.allows(n)}
        session.max_steps = profile.max_steps
        session.delegation.profile = profile
        if profile.model and profile.model != "inherit":
            self.set_model(session, profile.model, reason="set_model")

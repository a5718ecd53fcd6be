"""The native engine: agentls's own agent loop over a provider and the built-in tools.

A `NativeSession` owns what the loop needs for each model call: the provider (behind retries),
the merged provider options (defaults <- model id <- config <- skills <- thinking), vision
routing, and the compacted view of the history it sends. A subagent is a `NativeSession` too,
made from its parent's (`agent/subagents.py`).

Prompt commands work in every front door because they are handled here: `/model <id> [text]`
switches the model, `/<skill> [args]` runs a user-invocable skill.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from protocol.updates import AgentMessageChunk, ModelSwitched
from server.agent.compaction import CompactionSettings, ContextView
from server.agent.context import configured_instructions, session_system_prompt
from server.agent.instructions import Instructions
from server.agent.loop import run_turn
from server.agent.subagents import Background, Budget, Delegation, Profile, ProfileRegistry
from server.engines.base import EngineCapabilities, EngineError
from server.mcp.engine import McpSupport
from server.permissions import MODES, PermissionState, rules_from_names, trust_notice
from server.providers import catalog, images, options, thinking
from server.providers.base import Provider, ProviderSettings
from server.providers.messages import Message, ModelRequest, StreamEvent, ToolSpec, Usage
from server.providers.registry import (
    ProviderConfigError,
    create_provider,
    infer_provider,
    prefetch,
    resolve_settings,
    wire_of,
)
from server.providers.retry import RetryPolicy, StreamRestart, stream_with_retries
from server.sessions import codec
from server.skills import (
    MODEL_KEY,
    SkillCatalog,
    activate,
    deactivate_all,
    expand_command,
    parse_command,
)
from server.tools.base import Tool, ToolContext
from server.turn import SessionSpec, TurnInput, TurnOutcome, TurnSink

log = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderSettings], Provider]


@dataclass
class NativeSession:
    """One session of the native engine: its provider settings, tools, full history, and what
    each model call is built from."""

    spec: SessionSpec
    settings: ProviderSettings
    tools: dict[str, Tool]
    tool_ctx: ToolContext
    permissions: PermissionState
    factory: ProviderFactory
    max_steps: int = 100
    approval_timeout: float = 120.0
    history: list[Message] = field(default_factory=list)
    steers: list[str] = field(default_factory=list)
    view: ContextView = field(default_factory=ContextView)
    """What is sent instead of the full history once it has been compacted."""
    think: thinking.ThinkingRequest = field(default_factory=thinking.ThinkingRequest)
    """The current turn's thinking request."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    turn_usage: Usage = field(default_factory=Usage)
    """This turn's usage so far, subagents included."""
    skills: SkillCatalog | None = None
    delegation: Delegation | None = None
    """Subagent profiles this session may start, and its own place in the subagent tree."""
    background: Background = field(default_factory=Background)
    environ: dict[str, str] | None = None
    switched: str | None = None
    """Why the model changed since the last call (announced with `model_switched`)."""
    instructions: Instructions | None = None
    """The user's and the project's AGENTS.md / CLAUDE.md files."""
    notices: list[Any] = field(default_factory=list)
    """Updates for the session's first turn (what an untrusted workspace had ignored)."""
    mcp: Any = None
    """The session's MCP servers (`server.mcp.session.McpSessionServers`), when it has any."""
    skill_base: ProviderSettings | None = None
    """The settings a skill's `model` replaced; restored when the turn ends."""
    _provider: Provider | None = None

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def llm(self) -> dict[str, Any]:
        return self.spec.config.get("llm") or {}

    @property
    def vision_model(self) -> str | None:
        return self.llm.get("visionModel")

    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = self.factory(self.settings)
        return self._provider

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent | StreamRestart]:
        return stream_with_retries(self.provider(), request, self.retry)

    def tool_specs(self) -> list[ToolSpec]:
        return [ToolSpec(**t.spec()) for t in self.tools.values()]

    def call_options(self, *, thinking_on: bool = True) -> dict[str, Any]:
        """defaults(provider) <- infer(model) <- config providerOptions <- skills <- thinking."""
        wire = wire_of(self.settings.provider)
        merged = options.resolve(
            self.settings.provider,
            self.model,
            self.llm.get("providerOptions"),
            self.tool_ctx.state.get(options.SKILL_STATE_KEY),
        )
        if not thinking_on:
            return merged
        extra = thinking.options(wire, self.model, self.think, max_tokens=merged.get("maxTokens"))
        return options.merge(merged, extra)

    def request(self, context: Message) -> ModelRequest:
        """The next model call: the (compacted) history, then the per-call turn context."""
        messages = self.view.messages(self.history)
        if not images.can_see(self.model, self.settings.provider, self.vision_model):
            messages = images.without_images(messages)
        files = self.instructions.render() if self.instructions else ""  # once per call
        return ModelRequest(
            model=self.model,
            system=session_system_prompt(self, files),
            messages=[*messages, context],
            tools=self.tool_specs(),
            options=self.call_options(),
            stable_prefix=len(messages),
            instructions=configured_instructions(self, files),
        )

    def compaction_settings(self) -> CompactionSettings:
        window = catalog.describe(self.model, self.settings.provider).context_window
        return CompactionSettings.from_config(self.llm, window)

    def route_vision(self, sink: TurnSink, *, new_images: bool = False) -> None:
        """Move to a vision model when images need one; the move sticks for the session."""
        target = images.vision_target(
            self.model,
            self.settings.provider,
            configured=self.vision_model,
            new_images=new_images,
            history_images=images.has_images(self.history),
        )
        if target:
            self.settings = replace(self.settings, model=target)
            sink.emit(ModelSwitched(model=target, reason="vision"))

    def apply_skill_model(self) -> None:
        """An active skill that names a model runs the rest of the turn on it. A model that
        cannot be used here (no key for its provider) leaves the turn on the current one."""
        wanted = self.tool_ctx.state.get(MODEL_KEY)
        if not wanted or wanted[1] == self.model:
            return
        base = self.skill_base or self.settings
        try:
            self.switch_model(wanted[1], reason=f"skill {wanted[0]}")
        except EngineError as exc:
            log.warning("skill %s asks for model %s: %s", wanted[0], wanted[1], exc)
            self.tool_ctx.state.pop(MODEL_KEY, None)
            return
        self.skill_base = base

    def end_skill_model(self) -> None:
        """Back to the session's own model; the next call announces it."""
        base, self.skill_base = self.skill_base, None
        if base is None or base == self.settings:
            return
        if base.provider != self.settings.provider:
            self._provider = None
        self.settings, self.switched = base, "skill finished"

    def account(self, usage: Usage) -> None:
        self.usage += usage
        self.cost_usd += catalog.cost_usd(self.model, usage)

    def switch_model(self, model: str, *, reason: str = "set_model") -> None:
        """Use `model` from the next model call on, even inside a running turn. A model of
        another provider switches provider too, unless a custom base URL is pinned."""
        before = self.model
        provider = infer_provider(model, self.environ)
        pinned = self.llm.get("baseUrl")  # a custom endpoint serves whatever it is asked
        if provider and provider != self.settings.provider and not pinned:
            llm = {**self.llm, "provider": provider, "model": model}
            try:
                self.settings = resolve_settings(llm, self.environ)
            except ProviderConfigError as exc:
                raise EngineError(str(exc)) from exc
            self._provider = None
        else:
            self.settings = replace(self.settings, model=model)
        if self.model != before:
            self.switched = reason

    def announce_switch(self, sink: TurnSink) -> None:
        if self.switched:
            sink.emit(ModelSwitched(model=self.model, reason=self.switched))
            self.switched = None

    def begin_turn(self) -> None:
        """A new top-level turn: re-read skills and profiles (they may have changed on disk),
        forget the last turn's active skills and subagent count."""
        if self.skills:
            self.skills.refresh()
        if self.delegation:
            self.delegation.registry.refresh()
            self.delegation.budget = Budget()
        deactivate_all(self.tool_ctx.state)


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

    async def start(self) -> None:
        return None

    async def create_session(self, spec: SessionSpec) -> NativeSession:
        try:
            settings = resolve_settings(spec.config.get("llm", {}), self._environ)
        except ProviderConfigError as exc:
            raise EngineError(str(exc)) from exc
        prefetch(settings)
        if spec.mode not in MODES:
            raise EngineError(f"unknown mode {spec.mode!r}; modes: {', '.join(MODES)}")
        home = Path(self._env().get("HOME") or Path.home())
        skills = SkillCatalog(spec.cwd, home=home, environ=self._env())
        tools = self._tools() if self._tools else self._builtin_tools(spec.config, skills)
        allowed = rules_from_names(spec.config.get("permissions", {}).get("allow", []))
        session = NativeSession(
            spec=spec,
            settings=settings,
            tools={t.name: t for t in tools},
            tool_ctx=ToolContext(cwd=spec.cwd, session_id=spec.session_id, config=spec.config),
            permissions=PermissionState(mode=spec.mode, allow_rules=allowed),
            factory=self._factory,
            max_steps=int(spec.config.get("maxSteps", 100)),
            approval_timeout=float(spec.config.get("permissions", {}).get("approvalTimeout", 120)),
            retry=RetryPolicy(max_retries=settings.max_retries),
            skills=skills,
            delegation=Delegation(ProfileRegistry(spec.cwd, home=home)),
            instructions=Instructions.from_config(spec.cwd, home, spec.config),
            environ=self._environ,
        )
        session.notices.extend(filter(None, [trust_notice(spec.cwd, spec.config, skills)]))
        if not self._tools:
            self._add_task_tools(session)
        profile = self._profile(session, spec.subagent) if spec.subagent else None
        await self._mcp.open(session)
        if profile:
            self._run_as(session, profile)
        return session

    async def attach_mcp_servers(self, handle: NativeSession, servers: dict[str, Any]) -> None:
        """Start MCP servers a client passed for this session and add their tools."""
        await self._mcp.attach(handle, servers)

    async def run_turn(self, handle: NativeSession, turn: TurnInput, sink: TurnSink) -> TurnOutcome:
        if handle.mcp is not None:
            handle.mcp.flush(sink)
        notices, handle.notices = handle.notices, []
        for notice in notices:
            sink.emit(notice)
        if turn.model:
            self.set_model(handle, turn.model, reason="prompt options")
        environ = self._env()
        # An unusable image raises `ImageError`: this turn fails, the session keeps serving.
        text, pictures = await anyio.to_thread.run_sync(
            lambda: images.collect(
                turn.text,
                turn.images,
                cwd=handle.spec.cwd,
                home=Path(environ.get("HOME") or Path.home()),
                detect=images.auto_detect_enabled(environ),
            )
        )
        handle.think = thinking.choose(turn.think, turn.thinking_budget, handle.llm)
        await anyio.to_thread.run_sync(handle.begin_turn)
        rest = self._model_command(handle, text, sink)
        if rest is None and not pictures:
            return TurnOutcome("end_turn", Usage())
        text = rest or ""
        expanded = await anyio.to_thread.run_sync(expand_command, text, handle.skills)
        if expanded:
            text, skill = expanded
            activate(skill, handle.tool_ctx.state)
        parts = images.message_parts(text, pictures, images_first=turn.images_first)
        try:
            return await run_turn(handle, Message("user", parts), sink)
        finally:
            handle.end_skill_model()

    def _model_command(self, handle: NativeSession, text: str, sink: TurnSink) -> str | None:
        """`/model <id> [prompt]` switches models; returns the prompt left to run (None: none)."""
        command = parse_command(text)
        if command is None or command[0].lower() != "model":
            return text
        words = command[1].split(maxsplit=1)
        if words:
            self.set_model(handle, words[0], reason="/model")
            if len(words) > 1:
                return words[1]
            handle.announce_switch(sink)
        sink.emit(AgentMessageChunk(text=f"Model: {handle.model}. Switch with /model <id>."))
        return None

    def steer(self, handle: NativeSession, text: str) -> None:
        handle.steers.append(text)

    def unsent_steers(self, handle: NativeSession) -> list[str]:
        """At a turn's end: the steers it did not take (the client is told, to resend them)."""
        left, handle.steers = handle.steers, []
        return left

    def set_model(self, handle: NativeSession, model: str, *, reason: str = "set_model") -> None:
        handle.switch_model(model, reason=reason)

    def set_mode(self, handle: NativeSession, mode: str) -> None:
        if mode not in MODES:
            raise EngineError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        handle.permissions.mode = mode

    def describe(self, handle: NativeSession) -> dict[str, str]:
        return {
            "provider": handle.settings.provider,
            "model": handle.settings.model,
            "mode": handle.permissions.mode,
        }

    def snapshot(self, handle: NativeSession) -> dict[str, Any]:
        return codec.native_snapshot(handle)

    async def restore(self, spec: SessionSpec, snapshot: dict[str, Any]) -> NativeSession:
        handle = await self.create_session(spec)
        codec.apply_native_snapshot(handle, snapshot)
        return handle

    async def abort(self, handle: NativeSession) -> None:
        return None

    async def close_session(self, handle: NativeSession) -> None:
        if self._jobs is not None:
            self._jobs.close_session(handle.spec.session_id)
        await self._mcp.close(handle)
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

    def _builtin_tools(self, config: dict[str, Any], skills: SkillCatalog) -> list[Tool]:
        from server.tools.registry import builtin_tools
        from server.tools.shell import BackgroundJobs

        if self._jobs is None:
            self._jobs = BackgroundJobs()
        return builtin_tools(jobs=self._jobs, config=config, skills=skills)

    def _add_task_tools(self, session: NativeSession) -> None:
        from server.tools.names import disallowed
        from server.tools.task import task_tools

        off = disallowed(session.spec.config)
        session.tools.update({n: t for n, t in task_tools(session).items() if n not in off})

    def _profile(self, session: NativeSession, name: str) -> Profile:
        assert session.delegation is not None
        profile = session.delegation.registry.get(name)
        if profile is None:
            known = session.delegation.registry.names()
            raise EngineError(f"unknown subagent profile {name!r}; profiles: {known}")
        return profile

    def _run_as(self, session: NativeSession, profile: Profile) -> None:
        """A session started as a subagent profile: its tools, step cap, prompt and model."""
        assert session.delegation is not None
        session.tools = {n: t for n, t in session.tools.items() if profile.allows(n)}
        session.max_steps = profile.max_steps
        session.delegation.profile = profile
        if profile.model and profile.model != "inherit":
            session.switch_model(profile.model)

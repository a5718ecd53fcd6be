"""The native engine: agentls's own agent loop over a provider and the built-in tools.

A `NativeSession` owns what the loop needs for each model call: the provider (behind retries),
the merged provider options (defaults <- model id <- config <- skills <- thinking), vision
routing, and the compacted view of the history it sends.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from protocol.updates import ModelSwitched
from server.agent.compaction import CompactionSettings, ContextView
from server.agent.context import system_prompt
from server.agent.loop import run_turn
from server.engines.base import (
    EngineCapabilities,
    EngineError,
    SessionSpec,
    TurnInput,
    TurnOutcome,
    TurnSink,
)
from server.permissions import MODES, PermissionState, rules_from_names
from server.providers import catalog, images, options, thinking
from server.providers.base import Provider, ProviderSettings
from server.providers.messages import Message, ModelRequest, StreamEvent, TextPart, ToolSpec, Usage
from server.providers.registry import (
    ProviderConfigError,
    create_provider,
    infer_provider,
    resolve_settings,
    wire_of,
)
from server.providers.retry import RetryPolicy, StreamRestart, stream_with_retries
from server.tools.base import Tool, ToolContext

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
        return ModelRequest(
            model=self.model,
            system=system_prompt(
                self.spec.cwd,
                replace=self.spec.config.get("systemPrompt"),
                append=self.spec.config.get("appendSystemPrompt"),
            ),
            messages=[*messages, context],
            tools=self.tool_specs(),
            options=self.call_options(),
            stable_prefix=len(messages),
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

    def account(self, usage: Usage) -> None:
        self.usage += usage
        self.cost_usd += catalog.cost_usd(self.model, usage)


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

    async def start(self) -> None:
        return None

    async def create_session(self, spec: SessionSpec) -> NativeSession:
        try:
            settings = resolve_settings(spec.config.get("llm", {}), self._environ)
        except ProviderConfigError as exc:
            raise EngineError(str(exc)) from exc
        if spec.mode not in MODES:
            raise EngineError(f"unknown mode {spec.mode!r}; modes: {', '.join(MODES)}")
        tools = self._tools() if self._tools else self._builtin_tools(spec.config)
        allowed = rules_from_names(spec.config.get("permissions", {}).get("allow", []))
        return NativeSession(
            spec=spec,
            settings=settings,
            tools={t.name: t for t in tools},
            tool_ctx=ToolContext(cwd=spec.cwd, session_id=spec.session_id, config=spec.config),
            permissions=PermissionState(mode=spec.mode, allow_rules=allowed),
            factory=self._factory,
            max_steps=int(spec.config.get("maxSteps", 100)),
            approval_timeout=float(spec.config.get("permissions", {}).get("approvalTimeout", 120)),
            retry=RetryPolicy(max_retries=settings.max_retries),
        )

    async def run_turn(self, handle: NativeSession, turn: TurnInput, sink: TurnSink) -> TurnOutcome:
        if turn.model:
            self.set_model(handle, turn.model)
        environ = os.environ if self._environ is None else self._environ
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
        parts: list = [TextPart(text)] if text else []
        parts.extend(pictures)
        return await run_turn(handle, Message("user", parts), sink)

    def steer(self, handle: NativeSession, text: str) -> None:
        handle.steers.append(text)

    def set_model(self, handle: NativeSession, model: str) -> None:
        provider = infer_provider(model, self._environ)
        pinned = handle.llm.get("baseUrl")  # a custom endpoint serves whatever it is asked
        if provider and provider != handle.settings.provider and not pinned:
            llm = {**handle.llm, "provider": provider, "model": model}
            try:
                handle.settings = resolve_settings(llm, self._environ)
            except ProviderConfigError as exc:
                raise EngineError(str(exc)) from exc
            handle._provider = None
        else:
            handle.settings = replace(handle.settings, model=model)

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

    async def abort(self, handle: NativeSession) -> None:
        return None

    async def close_session(self, handle: NativeSession) -> None:
        if self._jobs is not None:
            self._jobs.close_session(handle.spec.session_id)
        log.debug(
            "session %s used %s (about $%.4f)",
            handle.spec.session_id,
            handle.usage,
            handle.cost_usd,
        )

    async def dispose(self) -> None:
        if self._jobs is not None:
            self._jobs.close()

    def _builtin_tools(self, config: dict[str, Any]) -> list[Tool]:
        from server.tools.registry import builtin_tools
        from server.tools.shell import BackgroundJobs

        if self._jobs is None:
            self._jobs = BackgroundJobs()
        return builtin_tools(jobs=self._jobs, config=config)

"""The native engine: agentls's own agent loop over a provider and the built-in tools."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from server.agent.loop import run_turn
from server.engines.base import (
    EngineCapabilities,
    EngineError,
    SessionSpec,
    TurnInput,
    TurnOutcome,
    TurnSink,
)
from server.permissions import MODES, PermissionState
from server.providers.base import Provider, ProviderSettings
from server.providers.messages import Message, TextPart
from server.providers.registry import (
    ProviderConfigError,
    create_provider,
    infer_provider,
    resolve_settings,
)
from server.tools.base import Tool, ToolContext

ProviderFactory = Callable[[ProviderSettings], Provider]


@dataclass
class NativeSession:
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
    _provider: Provider | None = None

    @property
    def model(self) -> str:
        return self.settings.model

    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = self.factory(self.settings)
        return self._provider

    def tool_specs(self):
        from server.providers.messages import ToolSpec

        return [ToolSpec(**t.spec()) for t in self.tools.values()]

    def call_options(self) -> dict[str, Any]:
        return dict(self.spec.config.get("llm", {}).get("providerOptions") or {})


class NativeEngine:
    """Runs sessions with the built-in loop. `provider_factory` is the seam tests use."""

    id = "native"
    capabilities = EngineCapabilities()

    def __init__(
        self,
        *,
        provider_factory: ProviderFactory = create_provider,
        tools: Callable[[], list[Tool]] | None = None,
    ):
        self._factory = provider_factory
        self._tools = tools
        self._jobs: Any = None

    async def start(self) -> None:
        return None

    async def create_session(self, spec: SessionSpec) -> NativeSession:
        try:
            settings = resolve_settings(spec.config.get("llm", {}))
        except ProviderConfigError as exc:
            raise EngineError(str(exc)) from exc
        if spec.mode not in MODES:
            raise EngineError(f"unknown mode {spec.mode!r}; modes: {', '.join(MODES)}")
        tools = self._tools() if self._tools else self._builtin_tools()
        return NativeSession(
            spec=spec,
            settings=settings,
            tools={t.name: t for t in tools},
            tool_ctx=ToolContext(cwd=spec.cwd, session_id=spec.session_id, config=spec.config),
            permissions=PermissionState(mode=spec.mode),
            factory=self._factory,
            max_steps=int(spec.config.get("maxSteps", 100)),
            approval_timeout=float(spec.config.get("permissions", {}).get("approvalTimeout", 120)),
        )

    async def run_turn(self, handle: NativeSession, turn: TurnInput, sink: TurnSink) -> TurnOutcome:
        if turn.model:
            self.set_model(handle, turn.model)
        parts: list = [TextPart(turn.text)] if turn.text else []
        parts.extend(turn.images)
        return await run_turn(handle, Message("user", parts), sink)

    def steer(self, handle: NativeSession, text: str) -> None:
        handle.steers.append(text)

    def set_model(self, handle: NativeSession, model: str) -> None:
        provider = infer_provider(model)
        if provider and provider != handle.settings.provider:
            llm = {**handle.spec.config.get("llm", {}), "provider": provider, "model": model}
            try:
                handle.settings = resolve_settings(llm)
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

    async def dispose(self) -> None:
        if self._jobs is not None:
            self._jobs.close()

    def _builtin_tools(self) -> list[Tool]:
        from server.tools.registry import builtin_tools
        from server.tools.shell import BackgroundJobs

        if self._jobs is None:
            self._jobs = BackgroundJobs()
        return builtin_tools(jobs=self._jobs)

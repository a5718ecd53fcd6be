"""The state of one agent session: its provider settings, tools, full history, permissions,
skills, subagent place, and what each model call is built from. A subagent is an
`AgentSession` too, made from its parent's (`server.agent.subagents`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

from protocol.updates import ModelSwitched
from server.agent.delegation import Background, Budget, Delegation
from server.agent.instructions import Instructions
from server.agent.view import ContextView
from server.permissions import PermissionState, offered_in_plan
from server.providers import catalog, images, options, thinking
from server.providers.base import Provider, ProviderFactory, ProviderSettings
from server.providers.messages import Message, ModelRequest, StreamEvent, ToolSpec, Usage
from server.providers.registry import (
    PROVIDERS,
    ProviderConfigError,
    infer_provider,
    resolve_settings,
    wire_of,
)
from server.providers.retry import RetryPolicy, StreamRestart, stream_with_retries
from server.skills import MODEL_KEY, SkillCatalog, deactivate_all
from server.tools.base import Tool, ToolContext
from server.turn import SessionSpec, TurnSink

log = logging.getLogger(__name__)


@dataclass
class AgentSession:
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
    prompt_options: dict[str, Any] | None = None
    """The running turn's provider options (`options.providerOptions` of its prompt)."""
    """The current turn's thinking request."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    turn_usage: Usage = field(default_factory=Usage)
    """This turn's usage so far, subagents included."""
    plan_asked: bool = False
    """This turn asked the user to approve its plan (`server.agent.plan_approval`)."""
    prompted: bool = False
    """A turn has begun: what the session prepares while the user types is left to it."""
    closed: bool = False
    """Closed by its engine: nothing more is prepared for it."""
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
    seen: dict[str, Any] = field(default_factory=dict)
    """What this turn read of the workspace for its model calls (git state, instruction files),
    kept while its steps only look: cleared at each turn start and after a step whose tools may
    have changed the workspace (`server.agent.tool_calls.observing_only`)."""
    skill_base: ProviderSettings | None = None
    vision_base: ProviderSettings | None = None
    """The session's own model while an image turn runs on a vision model."""
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
        """The tools offered to the model: in plan mode only those that can run in it."""
        plan = self.permissions.mode == "plan"
        return [ToolSpec(**t.spec()) for t in self.tools.values() if not plan or offered_in_plan(t)]

    def call_options(self, *, thinking_on: bool = True) -> dict[str, Any]:
        """defaults(provider) <- infer(model) <- config providerOptions <- skills <- the
        prompt's providerOptions <- thinking."""
        wire = wire_of(self.settings.provider)
        provider = self.settings.provider
        prompt = {"providerOptions": self.prompt_options} if self.prompt_options else {}
        merged = options.resolve(
            provider,
            self.model,
            options.configured(self.llm, provider, wire, PROVIDERS),
            self.tool_ctx.state.get(options.SKILL_STATE_KEY),
            options.configured(prompt, provider, wire, PROVIDERS, named="options.providerOptions"),
        )
        if not thinking_on:
            return merged
        extra = thinking.options(wire, self.model, self.think, max_tokens=merged.get("maxTokens"))
        return options.merge(merged, extra)

    def route_vision(self, sink: TurnSink, *, new_images: bool = False) -> None:
        """A prompt with images runs its turn on a vision model when the session's own model
        cannot read them (or one is configured); `end_vision` moves back after the turn."""
        target = images.vision_target(
            self.model,
            self.settings.provider,
            configured=self.vision_model,
            new_images=new_images,
            history_images=False,
        )
        if target:
            self.vision_base = self.vision_base or self.settings
            self.settings = replace(self.settings, model=target)
            self.switched = None
            sink.emit(ModelSwitched(model=target, reason="vision"))

    def end_vision(self) -> None:
        """Back to the session's own model after an image turn; the next call announces it.
        Earlier images reach it as notes when it cannot read them (`images.without_images`)."""
        base, self.vision_base = self.vision_base, None
        if base is not None and base != self.settings:
            self.settings, self.switched = base, "the image turn ended"

    def apply_skill_model(self) -> None:
        """An active skill that names a model runs the rest of the turn on it. A model that
        cannot be used here (no key for its provider) leaves the turn on the current one."""
        wanted = self.tool_ctx.state.get(MODEL_KEY)
        if not wanted or wanted[1] == self.model:
            return
        base = self.skill_base or self.settings
        try:
            self.switch_model(wanted[1], reason=f"skill {wanted[0]}")
        except ProviderConfigError as exc:
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
        another provider switches provider too, unless a custom base URL is pinned. Raises
        `ProviderConfigError` when that provider cannot be used here (no key for it)."""
        before = self.model
        provider = infer_provider(model, self.environ)
        pinned = self.llm.get("baseUrl")  # a custom endpoint serves whatever it is asked
        if provider and provider != self.settings.provider and not pinned:
            llm = {**self.llm, "provider": provider, "model": model}
            self.settings = resolve_settings(llm, self.environ)
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

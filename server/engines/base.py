"""The engine contract. Every engine (native loop, external ACP agent, Claude Code) implements it.

The session service owns the turn lifecycle (tokens, seq, deadline, cancel scope, the one
terminal); an engine only runs a turn and reports what happens through the `TurnSink`.
Cancellation reaches the engine as anyio cancellation of `run_turn`; `abort` is the cooperative
half for engines that must also tell a peer process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from server.turn import SessionSpec, TurnInput, TurnOutcome, TurnSink

if TYPE_CHECKING:  # names for the catalogue's fields; every door imports this module at start
    from protocol.methods import McpServerInfo
    from server.agent.delegation import Background
    from server.agent.profiles import ProfileRegistry
    from server.skills import SkillCatalog
    from server.tools.base import FileAccess


class EngineError(Exception):
    """The engine cannot start or cannot serve this session; the message says why."""


@dataclass(frozen=True)
class EngineCapabilities:
    images: bool = True
    thinking: bool = True
    steer: bool = True
    skills: bool = True
    """Whether agentls's skills reach the engine's model (an ACP agent has no way in)."""


@dataclass(frozen=True)
class Command:
    """A slash command a prompt may start with."""

    name: str
    description: str
    hint: str = ""
    """What goes after the name, for the client's picker (e.g. `<model id> [prompt]`)."""


@dataclass
class SessionOffer:
    """What a session offers besides running turns: one catalogue for every front door."""

    tools: list[str] = field(default_factory=list)
    """Our names of the tools the model may call."""
    commands: list[Command] = field(default_factory=list)
    skills: SkillCatalog | None = None
    profiles: ProfileRegistry | None = None
    """The subagent profiles the session may start."""
    mcp: list[McpServerInfo] | None = None
    """The session's MCP servers; None when the engine runs none."""
    background: Background | None = None
    """The session's background subagents; None when the engine runs none."""
    use_editor_files: Callable[[FileAccess], None] | None = None
    """Routes the session's file tools through the editor first (ACP `fs/*`); None when the
    engine's tools do not run here."""


class EngineDriver(Protocol):
    id: str
    capabilities: EngineCapabilities

    async def start(self) -> None: ...

    async def create_session(self, spec: SessionSpec) -> Any: ...

    async def run_turn(self, handle: Any, turn: TurnInput, sink: TurnSink) -> TurnOutcome: ...

    def steer(self, handle: Any, text: str) -> None: ...

    def unsent_steers(self, handle: Any) -> list[str]:
        """At a turn's end: the steers it did not take (the client is told, to resend them)."""
        ...

    async def attach_mcp_servers(self, handle: Any, servers: dict[str, Any]) -> None:
        """Start MCP servers a client passed for this session; engines without MCP say so in
        the log and go on without them."""
        ...

    def set_model(self, handle: Any, model: str) -> None: ...

    def set_mode(self, handle: Any, mode: str) -> None: ...

    def offers(self, handle: Any) -> SessionOffer: ...

    def describe(self, handle: Any) -> dict[str, str]:
        """`{"provider", "model", "mode"}` of the session as it stands."""
        ...

    def snapshot(self, handle: Any, *, since: int = 0) -> dict[str, Any]:
        """What resuming the session needs, JSON-able: at least `provider`, `model`, `mode`;
        for engines that keep the conversation, `history` (normalized messages as dicts, from
        message `since` on: the store asks only for what it has not saved) and
        `historyLength`."""
        ...

    async def restore(self, spec: SessionSpec, snapshot: dict[str, Any]) -> Any:
        """A new handle for `spec` carrying on from `snapshot` (as `snapshot` returned it)."""
        ...

    async def abort(self, handle: Any) -> None: ...

    async def close_session(self, handle: Any) -> None: ...

    async def dispose(self) -> None: ...

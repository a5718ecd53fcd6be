"""LSP's lifecycle messages as agentls uses them: what `initialize` carries each way.

They are not in `METHODS` (pygls serves them itself); the schema lists them beside the methods,
with `"lifecycle": true`. Other LSP capabilities a client sends are ignored, and the server
advertises none of LSP's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from protocol.base import WireModel


class AgentlsClientCapabilities(WireModel):
    """What the client can show; each is false when absent."""

    permissions: bool = False
    """It answers `session/request_permission`. Without it, every tool call that needs approval
    is refused and the model is told so."""
    questions: bool = False
    """It answers `session/ask_question`. Without it, `ask_user_question` returns
    `user_not_reachable` and the model proceeds on its own."""
    images: bool = False
    """It can send and show images."""
    diffs: bool = False
    """It can render the `diff` of a `tool_call_update`."""
    report_turns: bool = False
    """It shows turns it did not prompt. Background subagents then outlive the turn that
    started them: a report that arrives while the session is idle runs a turn of its own (its
    updates carry a new `turnId`, open with a `user_message_chunk` whose `origin` is `report`
    and end with `turn_end`). Without it, a turn waits for its background subagents' reports."""


class ExperimentalClientCapabilities(WireModel):
    agentls: AgentlsClientCapabilities | None = None


class InitializeClientCapabilities(WireModel):
    experimental: ExperimentalClientCapabilities | None = None


class Implementation(WireModel):
    name: str
    version: str | None = None


class InitializeParams(WireModel):
    """LSP's `initialize` params; agentls reads `capabilities.experimental.agentls`."""

    process_id: int | None = None
    client_info: Implementation | None = None
    capabilities: InitializeClientCapabilities


class SandboxStatus(WireModel):
    """Where commands run by default on this server."""

    mode: Literal["workspace-write", "read-only", "off"]
    """What sessions get: the configured mode, or `off` where no sandbox can be made."""
    configured: Literal["workspace-write", "read-only", "off"]
    """What the configuration (user config, environment, flags) asks for."""
    network: bool
    """Whether sandboxed commands may use the network (all of it)."""
    network_ask: bool | None = None
    """With the network off, whether a command's first connection to a host asks the user
    (`sandbox.network: "ask"`)."""
    allowed_hosts: list[str] | None = None
    """With the network off, the hosts commands may still reach through agentls's proxy."""
    auto_allow: bool
    """Whether a sandboxed command runs without a permission request in `default` and
    `acceptEdits` (commands that visibly leave the sandbox still ask)."""
    kind: str | None = None
    """`bwrap` (Linux) or `sandbox-exec` (macOS); absent when there is none."""
    notice: str | None = None
    """Why commands run without the sandbox that was asked for."""
    sockets: Literal["blocked", "open"] | None = None
    """Whether a sandboxed command can open a Unix socket (`blocked`: a seccomp filter
    refuses them, so no host socket is reachable); absent without a sandbox."""
    deny_read: list[str] | None = None
    """Paths sandboxed commands cannot read (secrets, agentls's own data, config and runtime
    folders, `sandbox.denyRead`), as they are now on this server; a command that names one
    asks."""
    protected: list[str] | None = None
    """Names in the workspace (and `.git` at any depth) that sandboxed commands can never
    write, whether or not they exist."""


class AgentlsServerCapabilities(WireModel):
    protocol_version: int
    """The version of this protocol; it changes only with a breaking change."""
    version: str
    """The agentls version."""
    engines: list[str]
    """Engine ids `session/new` accepts."""
    providers: list[str]
    """Model provider ids `session/new` accepts."""
    features: list[str]
    """Optional features this server has: `steer`, `images`, `permissions`, `questions`, `mcp`."""
    sandbox: SandboxStatus | None = None


class ExperimentalServerCapabilities(WireModel):
    agentls: AgentlsServerCapabilities


class ServerCapabilities(WireModel):
    """Only `experimental.agentls`: agentls implements none of LSP's language features."""

    experimental: ExperimentalServerCapabilities


class InitializeResult(WireModel):
    capabilities: ServerCapabilities
    server_info: Implementation


class InitializedParams(WireModel):
    """No fields."""


@dataclass(frozen=True)
class LifecycleMessage:
    name: str
    params: type[WireModel] | None
    """None: no params."""
    result: type[WireModel] | None
    """None: the result is `null` (or none, for a notification)."""
    notification: bool
    doc: str


LIFECYCLE: tuple[LifecycleMessage, ...] = (
    LifecycleMessage(
        "initialize",
        InitializeParams,
        InitializeResult,
        False,
        "The first request; any other before it is `-32002` (ServerNotInitialized).",
    ),
    LifecycleMessage(
        "initialized", InitializedParams, None, True, "The client has the `initialize` answer."
    ),
    LifecycleMessage(
        "shutdown", None, None, False, "End every running turn (`aborted`), then answer `null`."
    ),
    LifecycleMessage("exit", None, None, True, "Exit the process (after `shutdown`)."),
)

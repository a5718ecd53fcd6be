"""The `session/update` union: everything a turn streams to the client, tagged on `kind`.

Clients must ignore kinds they do not know.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import Field, TypeAdapter

from protocol.base import WireModel

Terminal = Literal["completed", "aborted", "failed", "timed_out"]
StopReason = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error", "timeout"
]
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "fetch", "think", "other"]
ToolStatus = Literal["in_progress", "completed", "failed", "denied"]
PlanStatus = Literal["pending", "in_progress", "completed", "cancelled"]


class Usage(WireModel):
    """Token counts, summed over the model calls they cover."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class Location(WireModel):
    """A file (and optionally a line) a tool call touches, for follow-along in the editor."""

    path: str
    line: int | None = None


class Diff(WireModel):
    """A whole-file change made by an edit tool."""

    path: str
    old_text: str | None = None
    """None when the file was created."""
    new_text: str


class UserMessageChunk(WireModel):
    """Text the user sent (replayed by session/load), or reports handed to the model."""

    kind: Literal["user_message_chunk"] = "user_message_chunk"
    text: str
    origin: Literal["report"] | None = None
    """`report`: not the user's words but background subagents' reports, handed to the model
    as a message of the conversation. Absent for what the user sent."""


class AgentMessageChunk(WireModel):
    """A piece of the assistant's answer, streamed."""

    kind: Literal["agent_message_chunk"] = "agent_message_chunk"
    text: str


class AgentThoughtChunk(WireModel):
    """A piece of the model's visible thinking, streamed."""

    kind: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    text: str


class ToolCall(WireModel):
    """The model asked for a tool; sent before it runs (and before any permission prompt)."""

    kind: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    title: str
    """Short human title for the tool card, e.g. "Read src/app.py"."""
    tool_kind: ToolKind
    """What the tool does, for the card's icon."""
    input: dict[str, Any]
    locations: list[Location] | None = None
    parent_tool_call_id: str | None = None
    """Set on a call a subagent made: the `toolCallId` of the `task` call that started it
    (its own `toolCallId` is then `<parent>/<id>`, unique in the session)."""


class ToolCallUpdate(WireModel):
    """Progress or outcome of a tool call."""

    kind: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    parent_tool_call_id: str | None = None
    """As on the `tool_call` this updates."""
    status: ToolStatus
    output: str | None = None
    """The result as the model sees it (capped at 50,000 characters); while `in_progress`, what
    a running command has printed so far (its last 8,000 characters)."""
    error: str | None = None
    diff: Diff | None = None


class StepFinish(WireModel):
    """One model call finished."""

    kind: Literal["step_finish"] = "step_finish"
    step: int
    finish_reason: str
    usage: Usage


class PlanEntry(WireModel):
    id: str
    content: str
    status: PlanStatus


class Plan(WireModel):
    """The agent's todo list, replaced whole on every change."""

    kind: Literal["plan"] = "plan"
    entries: list[PlanEntry]


class QuestionNote(WireModel):
    """Mirror of a `session/ask_question` request and its outcome, for logs and observers."""

    kind: Literal["question"] = "question"
    questions: list[dict[str, Any]]
    outcome: str | None = None


class PermissionNote(WireModel):
    """Mirror of a `session/request_permission` request and its outcome."""

    kind: Literal["permission"] = "permission"
    tool_call_id: str
    outcome: str | None = None


class SubagentUpdate(WireModel):
    """A subagent started, progressed or finished."""

    kind: Literal["subagent"] = "subagent"
    id: str
    profile: str
    status: Literal["running", "completed", "failed", "aborted"]
    summary: str | None = None
    output_files: list[str] | None = None


class ModelSwitched(WireModel):
    """The session moved to another model (vision routing, set_model)."""

    kind: Literal["model_switched"] = "model_switched"
    model: str
    reason: str


class ModeChanged(WireModel):
    """The session's permission mode changed during a turn: the user approved the plan a
    plan-mode turn wrote (`reason: "plan approved"`)."""

    kind: Literal["mode_changed"] = "mode_changed"
    mode: Literal["default", "plan", "acceptEdits", "bypassPermissions"]
    reason: str


class Compaction(WireModel):
    """History was compacted to fit the context window (token estimates)."""

    kind: Literal["compaction"] = "compaction"
    before: int
    after: int


class StreamRetry(WireModel):
    """The model call failed with a transient error (429, 5xx, dropped connection, cut stream)
    and is retried after `delay` seconds. Everything streamed since the last `step_finish`
    (message and thought chunks, announced tool calls) is discarded: the retry streams the
    reply again from its start."""

    kind: Literal["stream_retry"] = "stream_retry"
    attempt: int
    """1 for the first retry."""
    delay: float
    """Seconds until the retry starts."""
    error: str
    """What went wrong, as the provider reported it."""


McpServerStatus = Literal[
    "starting", "connected", "failed", "stopped", "disabled", "untrusted", "configured"
]
"""`configured`: would start with a session (listings without one); `untrusted`: declared by a
project the user config does not trust, so not started."""


class McpStatus(WireModel):
    """An MCP server of the session: its state at the session's first turn, then every change
    (a crash mid-session, a stop)."""

    kind: Literal["mcp_status"] = "mcp_status"
    server: str
    """The server's configured name."""
    status: McpServerStatus
    error: str | None = None
    """Why it failed or is not started."""
    tools: int | None = None
    """How many tools it gives the session, when connected."""


class WorkspaceTrust(WireModel):
    """The workspace is not trusted, so agentls ignored what its files asked for: settings of
    `.agentls/config.json` that would widen permissions (a mode, allow rules, `null`s), the
    `allowed-tools` of its skills. Sent at the session's first turn. A client may offer
    "Trust this folder": trusting it (the editor's workspace trust passed as `workspaceTrusted`
    on `session/new`, the user config's `trustedProjects`, `--trust`) applies to new sessions."""

    kind: Literal["workspace_trust"] = "workspace_trust"
    trusted: bool
    cwd: str
    """The workspace folder, as the user would add it to `trustedProjects`."""
    ignored: list[str]
    """What was ignored, in words (`permissions.mode (bypassPermissions)`, `skill x: allowed-tools`)."""
    broad: bool | None = None
    """The workspace is the home folder, `/` or a folder above the home folder (an editor with
    no folder open): no command runs unasked there and no `trustedProjects` entry trusts it. Sent
    at the first turn whether or not anything was ignored; a client may propose opening a
    project folder instead of offering to trust this one."""


class StoreWarning(WireModel):
    """The session store could not write this session's events (the disk is full, the
    database cannot be written). The session goes on in memory; the writes are kept and
    retried with the next ones, and the turn's `turn_end` and result say `stored: false`."""

    kind: Literal["store_warning"] = "store_warning"
    error: str
    """What the store reported, e.g. `database or disk is full`."""
    pending: int
    """Writes waiting for the store."""


class Checkpoint(WireModel):
    """This turn changed files through agentls's file tools (write, edit), and kept what each
    had before: `session/rewind` to this turn restores them. Sent when the turn first changes
    a file; `files` lists all it changed so far. Changes made by shell commands are not kept."""

    kind: Literal["checkpoint"] = "checkpoint"
    files: list[str]
    """Absolute paths, in the order the turn first changed them."""


class TurnEnd(WireModel):
    """Always the last update of a turn; mirrors the `session/prompt` result."""

    kind: Literal["turn_end"] = "turn_end"
    terminal: Terminal
    stop_reason: StopReason
    usage: Usage
    error: str | None = None
    unsent_steers: list[str] | None = None
    """Steers accepted (`queued: true`) that the turn ended before taking: never sent to the
    model and dropped by the server; send them again if they still apply."""
    stored: bool | None = None
    """`false`: the session store failed to write some of this session's events up to this
    turn's end (see `store_warning`); they are kept in memory and written once the store
    accepts writes again. Absent when everything reached the store (or there is no store)."""


SessionUpdateKind = Annotated[
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | ToolCallUpdate
    | StepFinish
    | Plan
    | QuestionNote
    | PermissionNote
    | SubagentUpdate
    | ModelSwitched
    | ModeChanged
    | Compaction
    | StreamRetry
    | McpStatus
    | WorkspaceTrust
    | StoreWarning
    | Checkpoint
    | TurnEnd,
    Field(discriminator="kind"),
]

UPDATE_ADAPTER: TypeAdapter[SessionUpdateKind] = TypeAdapter(SessionUpdateKind)

UpdateKind = Literal[
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "step_finish",
    "plan",
    "question",
    "permission",
    "subagent",
    "model_switched",
    "mode_changed",
    "compaction",
    "stream_retry",
    "mcp_status",
    "workspace_trust",
    "store_warning",
    "checkpoint",
    "turn_end",
]
"""The `kind` of each member of `SessionUpdateKind`, for code that switches on stored updates
(JSON) without parsing them; a `match` over it with `assert_never` is checked exhaustive."""
UPDATE_KINDS: frozenset[str] = frozenset(get_args(UpdateKind))

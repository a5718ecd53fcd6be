"""THE method table: every agentls JSON-RPC method, named once.

Dispatch, schema export and docs all read `METHODS`; nothing else spells a method string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from protocol.base import WireModel
from protocol.content import ContentBlock
from protocol.updates import (
    Diff,
    McpServerStatus,
    SessionUpdateKind,
    StopReason,
    Terminal,
    Usage,
)

PermissionMode = Literal["default", "plan", "acceptEdits", "bypassPermissions"]
SandboxMode = Literal["workspace-write", "read-only", "off"]


class Empty(WireModel):
    """No fields."""


class ModeInfo(WireModel):
    id: PermissionMode
    name: str
    description: str


class ModeState(WireModel):
    current_mode_id: PermissionMode
    available_modes: list[ModeInfo]


class ModelInfo(WireModel):
    model_id: str
    name: str
    provider: str
    context_window: int | None = None
    vision: bool = False


class ModelState(WireModel):
    current_model_id: str
    available_models: list[ModelInfo]


class McpServerConfig(WireModel):
    """How to start or reach an MCP server: a command (stdio) or a URL (streamable HTTP). The
    shape of an entry of Claude Code's `.mcp.json`."""

    type: Literal["stdio", "http"] | None = None
    """Inferred when absent: `http` with a `url`, else `stdio`."""
    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    """Set for the server on top of a minimal environment (HOME, PATH, ...): API keys of the
    agent are not passed on unless listed here."""
    cwd: str | None = None
    """The server's working directory (default: the session's workspace)."""
    url: str | None = None
    headers: dict[str, str] | None = None
    startup_timeout: float | None = None
    """Seconds to connect, initialize and list tools (default 30)."""
    tool_timeout: float | None = None
    """Seconds one tool call may take (default 600)."""


class NewSessionParams(WireModel):
    cwd: str
    """Absolute path of the workspace the agent works in."""
    engine: str | None = None
    provider: str | None = None
    model: str | None = None
    mode: PermissionMode | None = None
    subagent: str | None = None
    """Run the session as this subagent profile."""
    mcp_servers: dict[str, McpServerConfig] | None = None
    """MCP servers for this session, by name, on top of the configured ones (a name here
    replaces a configured server of that name). Their tools are `mcp__<name>__<tool>`."""
    workspace_trusted: bool | None = None
    """The editor's own workspace trust for `cwd` (VS Code's `workspace.isTrusted`): true lets
    the project config set a mode and allow rules and its skills grant tools. Absent or false:
    the user config's `trustedProjects` and the `--trust` flag decide."""
    sandbox: SandboxMode | None = None
    """Where this session's commands run (the user's choice; a project config can only make
    it stricter): `workspace-write` (default where a sandbox can be made), `read-only`, `off`.
    `initialize` says whether a sandbox can be made here."""


class SessionInfoResult(WireModel):
    session_id: str
    engine: str
    model: str
    provider: str
    modes: ModeState
    models: ModelState


class PromptOptions(WireModel):
    model: str | None = None
    """Use this model for this turn and the ones after it."""
    think: Literal["think", "hard", "ultra"] | bool | None = None
    thinking_budget: int | None = None
    provider_options: dict[str, Any] | None = None
    """Provider options for this turn only, laid out as `llm.providerOptions` (our names or the
    API's, a section per provider id), over the configured ones and an active skill's; thinking
    options still come last. A key the session's provider takes none of is named in a warning."""


class PromptParams(WireModel):
    session_id: str
    prompt: list[ContentBlock] = Field(min_length=1)
    options: PromptOptions | None = None


class PromptResult(WireModel):
    turn_id: str
    terminal: Terminal
    stop_reason: StopReason
    usage: Usage
    error: str | None = None
    unsent_steers: list[str] | None = None
    """As on `turn_end`: accepted steers the turn ended before taking; send them again."""
    stored: bool | None = None
    """As on `turn_end`: `false` when the session store failed to write this turn's events."""


class SessionRef(WireModel):
    session_id: str


class RewindParams(WireModel):
    session_id: str
    turn_id: str
    """Undo this turn and every later one."""
    files: bool = True
    """Restore the files those turns changed through agentls's file tools to what they were
    before the turn (files they created are deleted)."""
    conversation: bool = False
    """Also go back in the conversation: a new session (a branch) holds the history before the
    turn; the original session is kept, unchanged, and stays loadable."""
    dry_run: bool = False
    """Change nothing: say what would be restored, and which files changed since."""


class RewindResult(WireModel):
    restored: list[str]
    """Files given back their content from before the turn (or that would be, on a dry run)."""
    removed: list[str]
    """Files the turns created, deleted (or that would be)."""
    conflicts: list[str] = []
    """Dry run: files changed outside agentls since it last wrote them; a real rewind refuses
    (`-31006`) while there are any."""
    session_id: str | None = None
    """With `conversation`: the new session, to load or prompt; the old one is unchanged."""


class LoadSessionParams(WireModel):
    session_id: str
    mcp_servers: dict[str, McpServerConfig] | None = None
    """MCP servers for the loaded session, as in `session/new` (they are not stored with the
    session: their commands and environment stay with the client)."""


class SteerParams(WireModel):
    session_id: str
    prompt: list[ContentBlock] = Field(min_length=1)


class SteerResult(WireModel):
    queued: bool


class SetModelParams(WireModel):
    session_id: str
    model_id: str


class SetModeParams(WireModel):
    session_id: str
    mode_id: PermissionMode


class ModelsListParams(WireModel):
    provider: str | None = None


class ModelsListResult(WireModel):
    models: list[ModelInfo]


class EngineInfo(WireModel):
    id: str
    name: str
    available: bool
    description: str
    capabilities: dict[str, bool] | None = None
    """What the engine supports: images, thinking, steer, skills (agentls's skills reach its
    model), permissions, questions."""


class EnginesListResult(WireModel):
    engines: list[EngineInfo]


class SessionUpdateParams(WireModel):
    session_id: str
    turn_id: str
    seq: int
    """Per-session, strictly increasing across turns."""
    update: SessionUpdateKind


class ToolCallRef(WireModel):
    tool_call_id: str
    name: str
    title: str
    input: dict[str, Any]
    reason: str | None = None
    """Why the user is being asked (e.g. "runs rm -rf", "path outside the workspace")."""
    risk: Literal["low", "medium", "high"] | None = None
    """How much harm the call can do if it goes wrong: `low` (reads), `medium` (file writes, the
    network), `high` (commands, git history)."""
    proposal: Diff | None = None
    """For a file edit or write: the whole file before and after the call, as it would be
    written now, so an editor can show it in its own diff view. Allowing with `updatedInput`
    `{"content": ...}` writes that text instead (the user's own version of the change)."""


class PermissionOption(WireModel):
    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class RequestPermissionParams(WireModel):
    session_id: str
    turn_id: str
    tool_call: ToolCallRef
    options: list[PermissionOption]


class PermissionOutcome(WireModel):
    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None


class RequestPermissionResult(WireModel):
    outcome: PermissionOutcome
    updated_input: dict[str, Any] | None = None
    """When allowing: run the tool with this input instead of the one requested. For a request
    with a `proposal`, `{"content": "<the whole file>"}` writes that text to the file instead
    of the proposed change (the model is told the user changed it)."""
    message: str | None = None
    """When rejecting: the reason, passed on to the model."""


class QuestionOption(WireModel):
    label: str
    description: str | None = None


class Question(WireModel):
    question: str
    header: str | None = None
    options: list[QuestionOption]
    multi_select: bool = False


class AskQuestionParams(WireModel):
    session_id: str
    turn_id: str
    questions: list[Question]


class AskQuestionResult(WireModel):
    answers: dict[str, str | list[str]] | None = None
    """Keyed by question text; a list for multi-select questions."""
    declined: bool | None = None


class ListSessionsParams(WireModel):
    cwd: str | None = None
    """Only sessions whose workspace is this directory; all sessions when absent."""
    cursor: str | None = None
    """`nextCursor` of the previous page."""
    limit: int | None = Field(default=None, ge=1, le=500)
    """Page size (default 50)."""


class SessionSummary(WireModel):
    """A stored session, for pickers."""

    session_id: str
    title: str
    """Derived from the session's first prompt."""
    cwd: str
    updated_at: str
    """When the session last started or finished a turn (ISO 8601, UTC)."""


class ListSessionsResult(WireModel):
    data: list[SessionSummary]
    """Newest first."""
    next_cursor: str | None = None
    """Pass as `cursor` for the next page; absent on the last page."""


class SearchSessionsParams(WireModel):
    query: str
    """FTS5 query (words, "phrases", prefix*, AND/OR/NOT); plain text works too."""
    limit: int | None = Field(default=None, ge=1, le=200)
    """Most hits returned (default 20)."""


class SearchHit(WireModel):
    """One journal entry that matches, best match first."""

    session_id: str
    role: str
    """Whose text matched: `user`, `assistant`, `thinking`, `tool` or `plan`."""
    snippet: str
    """The matching passage; matched terms are wrapped in `**`, cuts marked with `…`."""
    timestamp: str
    """When the entry was recorded (ISO 8601, UTC)."""


class SearchSessionsResult(WireModel):
    hits: list[SearchHit]


class WorkspaceRef(WireModel):
    """Which workspace a catalogue is for: a session's, or a directory."""

    session_id: str | None = None
    """The session's workspace, as its engine sees it."""
    cwd: str | None = None
    """An absolute workspace directory, when there is no session yet."""

    @model_validator(mode="after")
    def _one_of(self) -> WorkspaceRef:
        if not self.session_id and not self.cwd:
            raise ValueError("give sessionId or cwd")
        return self


class SkillsListParams(WorkspaceRef):
    pass


class SkillInfo(WireModel):
    """A skill: a SKILL.md folder the model runs with the `skill` tool or the user as `/name`."""

    name: str
    description: str
    source: Literal["builtin", "user", "project"]
    """Which discovery layer it comes from (a later layer wins on a name clash)."""
    path: str
    """The skill's SKILL.md file."""
    user_invocable: bool
    """The user can run it as `/name args` at the start of a prompt."""
    model_invocable: bool
    """The model can run it with the `skill` tool."""
    allowed_tools: list[str] = []
    """Tools that run without asking while the skill is active."""
    version: str | None = None
    model: str | None = None


class CatalogWarning(WireModel):
    """A skill or subagent profile file that was skipped, and why."""

    path: str
    message: str


class SkillsListResult(WireModel):
    skills: list[SkillInfo]
    """Sorted by name."""
    warnings: list[CatalogWarning] = []


class SubagentsListParams(WorkspaceRef):
    pass


class SubagentInfo(WireModel):
    """A subagent profile the `task` tool can start."""

    name: str
    description: str
    source: Literal["builtin", "user", "project"]
    tools: list[str] | None = None
    """The tools it may use; absent means every tool."""
    max_steps: int
    """Model calls it may make before it must stop."""
    model: str | None = None


class BackgroundSubagent(WireModel):
    """A background subagent of a session (`task` with `background: true`)."""

    task_id: str
    """The `task` call's toolCallId: the id of its `subagent` updates."""
    profile: str
    description: str
    status: Literal["running", "completed", "failed", "aborted"]
    turn_id: str
    """The turn that started it; it may outlive that turn."""
    activity: str | None = None
    """What it did last (the title of its latest tool call), while it runs."""
    reported: bool
    """Its report has been handed to the model."""


class SubagentsListResult(WireModel):
    subagents: list[SubagentInfo]
    warnings: list[CatalogWarning] = []
    background: list[BackgroundSubagent] = []
    """With `sessionId`: the session's background subagents, running and finished, oldest
    first."""


class StopSubagentParams(WireModel):
    session_id: str
    task_id: str


class StopSubagentResult(WireModel):
    stopped: bool
    """False when it had already finished (or was stopped before)."""


class McpListParams(WorkspaceRef):
    pass


class McpToolInfo(WireModel):
    """A tool an MCP server gives the session."""

    name: str
    """As the model calls it (and as permission rules name it): `mcp__<server>__<tool>`."""
    tool: str
    """The server's own name for it."""
    title: str | None = None
    description: str | None = None


class McpImplementation(WireModel):
    name: str
    version: str


class McpServerInfo(WireModel):
    """An MCP server of a workspace or session, for the editor's MCP panel."""

    name: str
    transport: Literal["stdio", "http"]
    source: Literal["user", "project", "client"]
    """`user`: the user config or `--mcp-config`; `project`: `.mcp.json` or the project config;
    `client`: `session/new`."""
    status: McpServerStatus
    error: str | None = None
    """Why it failed, or what to do to start it."""
    server_info: McpImplementation | None = None
    """Name and version the server gave when it connected."""
    tools: list[McpToolInfo] = []


class McpListResult(WireModel):
    servers: list[McpServerInfo]
    """Sorted by name."""


class AttachParams(WireModel):
    """The first message on a connection to a listening server (`agentls serve --listen`)."""

    token: str | None = None
    """The server's token (`--token-file`). Required on TCP; on a WebSocket it may come in the
    upgrade's `Authorization: Bearer` header instead; a Unix socket needs none."""
    env: dict[str, str] | None = None
    """The environment this connection's sessions use (API keys, base URLs, `AGENTLS_*`, and
    what their commands inherit), instead of the server's own. Never logged, never seen by
    another connection. Absent: the server's environment."""
    cwd: str | None = None
    """The client's working directory (absolute): a relative `cwd` of this connection's
    `session/new` is taken from there."""
    argv: list[str] | None = None
    """Serve flags for this connection's sessions, as `agentls serve` takes them
    (`--provider`, `--model`, `--permission-mode`, ...); with `door: "print"`, the flags of
    `agentls -p`."""
    door: Literal["serve", "print"] | None = None
    """Absent or `serve`: JSON-RPC. `print`: after the answer the connection carries one `agentls -p` / stream-json run,
    its stdin, stdout, stderr, signals and exit code multiplexed (`server.frontends.mux`)."""


class AttachResult(WireModel):
    version: str
    """The server's agentls version."""
    pid: int
    """The resident server's process id."""


Direction = Literal["client_to_server", "server_to_client"]


@dataclass(frozen=True)
class Method:
    name: str
    direction: Direction
    params: type[WireModel]
    result: type[WireModel] | None
    """None for notifications."""
    doc: str

    @property
    def is_notification(self) -> bool:
        return self.result is None


C2S: Direction = "client_to_server"
S2C: Direction = "server_to_client"

METHODS: tuple[Method, ...] = (
    Method(
        "connection/attach",
        C2S,
        AttachParams,
        AttachResult,
        "Authenticate a connection to a listening server and give it its environment; only as "
        "the connection's first message, and required first on TCP.",
    ),
    Method(
        "session/new", C2S, NewSessionParams, SessionInfoResult, "Create a session in a workspace."
    ),
    Method(
        "session/prompt",
        C2S,
        PromptParams,
        PromptResult,
        "Run one turn; answers when the turn reaches its terminal. Events stream meanwhile.",
    ),
    Method(
        "session/cancel",
        C2S,
        SessionRef,
        None,
        "Cancel the running turn; its prompt request then answers with terminal `aborted`.",
    ),
    Method(
        "session/steer",
        C2S,
        SteerParams,
        SteerResult,
        "Queue a user message into the running turn, before its next model call.",
    ),
    Method(
        "session/set_model",
        C2S,
        SetModelParams,
        Empty,
        "Switch model; takes effect on the next model call.",
    ),
    Method(
        "session/set_mode",
        C2S,
        SetModeParams,
        Empty,
        "Switch permission mode; takes effect on the next tool call.",
    ),
    Method(
        "session/close",
        C2S,
        SessionRef,
        Empty,
        "Free the session's resources (a running turn is cancelled); a stored session stays "
        "loadable.",
    ),
    Method(
        "session/load",
        C2S,
        LoadSessionParams,
        SessionInfoResult,
        "Open a stored session: its history is replayed as `session/update` events before the "
        "answer, then the session takes prompts again with its full context.",
    ),
    Method(
        "session/rewind",
        C2S,
        RewindParams,
        RewindResult,
        "Undo a turn and every later one: restore the files they changed (see `checkpoint` "
        "updates) and, if asked, branch the conversation before it. Refused while a turn runs "
        "(`-31002`) and when a file changed outside agentls since (`-31006`).",
    ),
    Method(
        "session/list",
        C2S,
        ListSessionsParams,
        ListSessionsResult,
        "Stored sessions, newest first, a page at a time.",
    ),
    Method(
        "session/search",
        C2S,
        SearchSessionsParams,
        SearchSessionsResult,
        "Full-text search over what every stored session showed the user.",
    ),
    Method(
        "models/list",
        C2S,
        ModelsListParams,
        ModelsListResult,
        "Models known to the catalogue, for pickers.",
    ),
    Method("engines/list", C2S, Empty, EnginesListResult, "Engines this server can run."),
    Method("session/update", S2C, SessionUpdateParams, None, "One event of a running turn."),
    Method(
        "session/request_permission",
        S2C,
        RequestPermissionParams,
        RequestPermissionResult,
        "Ask the user whether a tool call may run.",
    ),
    Method(
        "session/ask_question",
        S2C,
        AskQuestionParams,
        AskQuestionResult,
        "Ask the user one to four multiple-choice questions (free text allowed).",
    ),
    Method(
        "skills/list",
        C2S,
        SkillsListParams,
        SkillsListResult,
        "Skills a workspace can run (slash commands, the `skill` tool) and files that were skipped.",
    ),
    Method(
        "subagents/list",
        C2S,
        SubagentsListParams,
        SubagentsListResult,
        "Subagent profiles the `task` tool can start in a workspace, and a session's "
        "background subagents.",
    ),
    Method(
        "subagents/stop",
        C2S,
        StopSubagentParams,
        StopSubagentResult,
        "Stop one background subagent of a session; the model is told at its next call.",
    ),
    Method(
        "mcp/list",
        C2S,
        McpListParams,
        McpListResult,
        "MCP servers of a session (live status and tools) or of a workspace (as configured).",
    ),
)

BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}

PROTOCOL_VERSION = 1

"""THE method table: every agentls JSON-RPC method, named once.

Dispatch, schema export and docs all read `METHODS`; nothing else spells a method string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from protocol.base import WireModel
from protocol.content import ContentBlock
from protocol.updates import SessionUpdateKind, StopReason, Terminal, Usage

PermissionMode = Literal["default", "plan", "acceptEdits", "bypassPermissions"]


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


class NewSessionParams(WireModel):
    cwd: str
    """Absolute path of the workspace the agent works in."""
    engine: str | None = None
    provider: str | None = None
    model: str | None = None
    mode: PermissionMode | None = None
    subagent: str | None = None
    """Run the session as this subagent profile."""


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


class SessionRef(WireModel):
    session_id: str


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
    """When allowing: run the tool with this input instead of the one requested."""
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
        "Free the session's resources (a running turn is cancelled).",
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
)

BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}

PROTOCOL_VERSION = 1

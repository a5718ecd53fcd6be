"""A small async client for `agentls serve` (JSON-RPC 2.0, LSP framing, stdio).

    from protocol.client import Client, AgentMessageChunk, PromptResult, allow_once

    async with await Client.spawn(on_permission=allow_once) as client:
        session = await client.new_session(".")
        async for update in session.prompt("What does this project do?"):
            if isinstance(update, AgentMessageChunk):
                print(update.text, end="")
            elif isinstance(update, PromptResult):
                print(f"\\n[{update.terminal}]")

It needs only pydantic and the standard library (no pygls, no provider SDK). Updates are the
models of `protocol.updates`; kinds this client does not know arrive as `UnknownUpdate`.
The protocol itself is described in `protocol/README.md`.
"""

from protocol.client._client import DEFAULT_CAPABILITIES, Client, default_command
from protocol.client._connection import Connection
from protocol.client._errors import (
    ERROR_CLASSES,
    AgentlsError,
    ConnectionClosed,
    EngineUnavailable,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    ProtocolVersionError,
    ProviderUnavailable,
    RequestCancelled,
    RewindRefused,
    RpcError,
    ServerNotInitialized,
    SessionBusy,
    SessionNotFound,
    Unauthorized,
)
from protocol.client._handlers import (
    PermissionHandler,
    QuestionHandler,
    allow_once,
    cancelled,
    decline,
    pick,
    reject,
    selected,
)
from protocol.client._session import Session
from protocol.client._turn import Turn, UnknownUpdate, Update, answer_text, parse_update
from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    PromptOptions,
    PromptResult,
    RequestPermissionParams,
    RequestPermissionResult,
)
from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Checkpoint,
    Compaction,
    McpStatus,
    ModeChanged,
    ModelSwitched,
    PermissionNote,
    Plan,
    QuestionNote,
    StepFinish,
    StoreWarning,
    StreamRetry,
    SubagentUpdate,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    UserMessageChunk,
    WorkspaceTrust,
)

__all__ = [
    "DEFAULT_CAPABILITIES",
    "ERROR_CLASSES",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "AgentlsError",
    "AskQuestionParams",
    "AskQuestionResult",
    "Checkpoint",
    "Client",
    "Compaction",
    "Connection",
    "ConnectionClosed",
    "EngineUnavailable",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "McpStatus",
    "MethodNotFound",
    "ModeChanged",
    "ModelSwitched",
    "ParseError",
    "PermissionHandler",
    "PermissionNote",
    "Plan",
    "PromptOptions",
    "PromptResult",
    "ProtocolVersionError",
    "ProviderUnavailable",
    "QuestionHandler",
    "QuestionNote",
    "RequestCancelled",
    "RequestPermissionParams",
    "RequestPermissionResult",
    "RewindRefused",
    "RpcError",
    "ServerNotInitialized",
    "Session",
    "SessionBusy",
    "SessionNotFound",
    "StepFinish",
    "StoreWarning",
    "StreamRetry",
    "SubagentUpdate",
    "ToolCall",
    "ToolCallUpdate",
    "Turn",
    "TurnEnd",
    "Unauthorized",
    "UnknownUpdate",
    "Update",
    "UserMessageChunk",
    "WorkspaceTrust",
    "allow_once",
    "answer_text",
    "cancelled",
    "decline",
    "default_command",
    "parse_update",
    "pick",
    "reject",
    "selected",
]

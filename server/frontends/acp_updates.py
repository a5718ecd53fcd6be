"""Projection between agentls wire models and ACP (`agent-client-protocol` schema) for `agentls acp`.

Our events become `session/update` variants, prompts come in as ACP content blocks, the turn's
terminal becomes a stop reason, and questions become an elicitation form (or a note telling the model to ask in the chat).
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any, assert_never

from acp import schema as acp

from protocol.methods import PromptResult, Question, SessionInfoResult
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
    SessionUpdateKind,
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
from server.config import user_config_path
from server.frontends.acp_tools import tool_call_progress, tool_call_start

AcpUpdate = (
    acp.CurrentModeUpdate
    | acp.UserMessageChunk
    | acp.AgentMessageChunk
    | acp.AgentThoughtChunk
    | acp.ToolCallStart
    | acp.ToolCallProgress
    | acp.AgentPlanUpdate
    | acp.UsageUpdate
    | acp.ConfigOptionUpdate
)

MODEL_OPTION = "model"
MODE_OPTION = "mode"


def text_block(text: str) -> acp.TextContentBlock:
    return acp.TextContentBlock(type="text", text=text)


def project(update: SessionUpdateKind) -> list[AcpUpdate]:
    """The ACP updates one agentls event becomes (none for mirrors and bookkeeping)."""
    match update:
        case UserMessageChunk(text=text):
            return [
                acp.UserMessageChunk(session_update="user_message_chunk", content=text_block(text))
            ]
        case AgentMessageChunk(text=text):
            return [
                acp.AgentMessageChunk(
                    session_update="agent_message_chunk", content=text_block(text)
                )
            ]
        case AgentThoughtChunk(text=text):
            return [
                acp.AgentThoughtChunk(
                    session_update="agent_thought_chunk", content=text_block(text)
                )
            ]
        case WorkspaceTrust():
            return [trust_notice(update)]
        case StoreWarning():
            return [store_notice(update)]
        case ToolCall():
            return [tool_call_start(update)]
        case ToolCallUpdate():
            return [tool_call_progress(update)]
        case Plan():
            return [plan(update)]
        case McpStatus(status="failed"):
            return [mcp_notice(update)]
        case StreamRetry():
            return [retry_notice(update)]
        case (
            StepFinish()
            | QuestionNote()
            | PermissionNote()
            | SubagentUpdate()
            | ModelSwitched()
            | ModeChanged()
            | Compaction()
            | McpStatus()
            | Checkpoint()
            | TurnEnd()
        ):
            # The door handles step_finish (usage), model_switched (config options) and
            # mode_changed (current mode) itself;
            # the rest are mirrors of requests the client sees anyway, or have no ACP form.
            return []
        case _:
            assert_never(update)


def trust_notice(update: WorkspaceTrust) -> acp.AgentMessageChunk:
    """ACP has no notice: the note goes out as agent text, which every client shows, with the
    update itself in `_meta` for clients that render it their own way."""
    ignored = "; ".join(update.ignored)
    if update.broad:
        words = f"**{BROAD_WORDS.format(cwd=update.cwd)}**\n\n"
        if ignored:
            words += f"Its project files asked for what agentls ignored: {ignored}.\n\n"
        return note(words, "workspaceTrust", update)
    words = (
        f"**This folder is not trusted**, so agentls ignored what its project files asked for: "
        f'{ignored}. To trust it, add `{update.cwd}` to `"trustedProjects"` in your user '
        f"config (`{user_config_path()}`), or start the agent as `agentls acp --trust`; "
        f"new sessions then get the project's settings.\n\n"
    )
    return note(words, "workspaceTrust", update)


BROAD_WORDS = (
    "agentls is working in {cwd}, your home folder or a folder above it: every command asks "
    "before it runs, and no folder rule trusts it. Open a project folder to let sandboxed "
    "commands run unasked."
)


def plan(update: Plan) -> acp.AgentPlanUpdate:
    """ACP entries are pending, in progress or completed: a cancelled one is left out (it is
    not done), and named in `_meta.agentls.cancelled`."""
    kept = [e for e in update.entries if e.status != "cancelled"]
    cancelled = [e.content for e in update.entries if e.status == "cancelled"]
    return acp.AgentPlanUpdate(
        session_update="plan",
        entries=[
            acp.PlanEntry(content=e.content, priority="medium", status=e.status)
            for e in kept
            if e.status != "cancelled"  # narrows the status for the ACP model
        ],
        field_meta={"agentls": {"cancelled": cancelled}} if cancelled else None,
    )


def mcp_notice(update: McpStatus) -> acp.AgentMessageChunk:
    """A server that failed to start or crashed: its tools are missing, so the user is told."""
    why = f": {update.error}" if update.error else ""
    words = f"\n\n**MCP server `{update.server}` failed**{why}. Its tools are not available.\n\n"
    return note(words, "mcpStatus", update)


def retry_notice(update: StreamRetry) -> acp.AgentMessageChunk:
    """What was streamed since the last step is sent again, so the user should know why."""
    words = (
        f"\n\n*The model call failed ({update.error}); retrying in {update.delay:g} s "
        f"(retry {update.attempt}).*\n\n"
    )
    return note(words, "streamRetry", update)


def store_notice(update: StoreWarning) -> acp.AgentMessageChunk:
    """Agent text, as the trust note: ACP has no warning of its own."""
    words = (
        f"\n\n**agentls could not store this session** ({update.error}); it goes on in "
        f"memory and the {update.pending} pending writes are retried with the next ones.\n\n"
    )
    return note(words, "storeWarning", update)


def note(
    words: str, key: str, update: WorkspaceTrust | StoreWarning | McpStatus | StreamRetry
) -> acp.AgentMessageChunk:
    """A notice as agent text, which every client shows, with the update in `_meta`."""
    return acp.AgentMessageChunk(
        session_update="agent_message_chunk",
        content=text_block(words),
        field_meta={"agentls": {key: update.to_wire()}},
    )


def usage_update(step: StepFinish, context_window: int) -> acp.UsageUpdate:
    u = step.usage
    used = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens + u.output_tokens
    return acp.UsageUpdate(session_update="usage_update", used=used, size=context_window)


# -- prompts and results -----------------------------------------------------------------------


def prompt_blocks(blocks: list[Any]) -> list[dict[str, Any]]:
    """ACP prompt content as our content blocks (wire dicts); audio is not supported."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, acp.TextContentBlock):
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, acp.ImageContentBlock):
            out.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
        elif isinstance(block, acp.ResourceContentBlock):
            link = {"type": "resource_link", "uri": block.uri, "name": block.name}
            out.append(link | ({"mimeType": block.mime_type} if block.mime_type else {}))
        elif isinstance(block, acp.EmbeddedResourceContentBlock):
            out.append(embedded_block(block.resource))
    return out


def embedded_block(resource: acp.TextResourceContents | acp.BlobResourceContents) -> dict:
    """An embedded resource as attached context; a binary one is described, not sent."""
    if isinstance(resource, acp.TextResourceContents):
        text = resource.text
    else:
        size = len(base64.b64decode(resource.blob, validate=False))
        text = f"(binary, {size} bytes)"
    block = {"type": "resource", "uri": resource.uri, "text": text}
    return block | ({"mimeType": resource.mime_type} if resource.mime_type else {})


def prompt_response(result: PromptResult) -> acp.PromptResponse:
    """A completed or cancelled turn; failed and timed-out turns are errors (`turn_error`)."""
    match "cancelled" if result.terminal == "aborted" else result.stop_reason:
        case "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled" as stop:
            pass
        case other:
            raise ValueError(f"a turn that stopped with {other!r} is answered by turn_error")
    u = result.usage
    usage = acp.Usage(
        total_tokens=u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cached_read_tokens=u.cache_read_tokens or None,
        cached_write_tokens=u.cache_write_tokens or None,
    )
    # The turn id names the turn for `_agentls/session/rewind`.
    meta: dict[str, Any] = {"turnId": result.turn_id}
    if result.stored is False:
        meta["stored"] = False
    return acp.PromptResponse(stop_reason=stop, usage=usage, field_meta={"agentls": meta})


def turn_error(result: PromptResult) -> str | None:
    """Why the turn did not complete, or None when it ended with an ACP stop reason."""
    if result.terminal in ("completed", "aborted") and result.stop_reason in (
        "end_turn",
        "max_tokens",
        "max_turn_requests",
        "refusal",
        "cancelled",
    ):
        return None
    return result.error or f"the turn ended with {result.terminal}"


# -- session state ----------------------------------------------------------------------------


def mode_state(info: SessionInfoResult) -> acp.SessionModeState:
    return acp.SessionModeState(
        current_mode_id=info.modes.current_mode_id,
        available_modes=[
            acp.SessionMode(id=m.id, name=m.name, description=m.description)
            for m in info.modes.available_modes
        ],
    )


def config_options(
    info: SessionInfoResult, *, keep: list[str] | tuple[str, ...] = ()
) -> list[acp.SessionConfigOptionSelect | acp.SessionConfigOptionBoolean]:
    """The model (category `model`) and the permission mode (category `mode`) as selects;
    `keep` are models the user chose that stay in the list (a vision switch moves off them)."""
    models = [
        acp.SessionConfigSelectOption(value=m.model_id, name=m.name, description=m.provider or None)
        for m in info.models.available_models
    ]
    listed = {m.value for m in models}
    models[:0] = [
        acp.SessionConfigSelectOption(value=m, name=m)
        for m in dict.fromkeys(keep)
        if m not in listed
    ]
    modes = [
        acp.SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
        for m in info.modes.available_modes
    ]
    return [
        acp.SessionConfigOptionSelect(
            id=MODEL_OPTION,
            name="Model",
            category="model",
            type="select",
            current_value=info.models.current_model_id,
            options=models,
        ),
        acp.SessionConfigOptionSelect(
            id=MODE_OPTION,
            name="Permission mode",
            category="mode",
            type="select",
            current_value=info.modes.current_mode_id,
            options=modes,
        ),
    ]


def session_info(row: dict[str, Any]) -> acp.SessionInfo:
    """One row of `session/list` ({sessionId, title, cwd, updatedAt}) in ACP form."""
    updated = row.get("updatedAt")
    if isinstance(updated, (int, float)):
        updated = datetime.fromtimestamp(updated, UTC).isoformat()
    return acp.SessionInfo(
        session_id=row["sessionId"],
        cwd=row.get("cwd") or "",
        title=row.get("title"),
        updated_at=updated,
    )


# -- questions --------------------------------------------------------------------------------


def question_key(index: int) -> str:
    return f"q{index + 1}"


def elicitation_schema(questions: list[Question]) -> acp.ElicitationSchema:
    """One form field per question: a titled single select, or a titled multi select."""
    properties: dict[str, Any] = {}
    for i, q in enumerate(questions):
        choices = [
            acp.EnumOption(const=o.label, title=o.label, description=o.description)
            for o in q.options
        ]
        if q.multi_select:
            properties[question_key(i)] = acp.ElicitationMultiSelectPropertySchema(
                type="array",
                title=q.header or q.question,
                description=q.question,
                items=acp.TitledMultiSelectItems(any_of=choices),
            )
        else:
            properties[question_key(i)] = acp.ElicitationStringPropertySchema(
                type="string", title=q.header or q.question, description=q.question, one_of=choices
            )
    return acp.ElicitationSchema(type="object", properties=properties, required=list(properties))


def answers_from_form(
    questions: list[Question], content: dict[str, Any] | None
) -> dict[str, str | list[str]]:
    answers: dict[str, str | list[str]] = {}
    for i, q in enumerate(questions):
        value = (content or {}).get(question_key(i))
        if isinstance(value, list):
            answers[q.question] = [str(v) for v in value]
        elif value not in (None, ""):
            answers[q.question] = str(value)
    return answers


def ask_in_chat(questions: list[Question]) -> str:
    """What the model is told when the editor cannot show choices: ask in the reply instead."""
    lines = [
        "The user's editor cannot show these choices. Ask in your reply, listing the options, "
        "then end your turn: the user answers in their next message. Do not assume an answer."
    ]
    for q in questions:
        options = "; ".join(
            f"{o.label} ({o.description})" if o.description else o.label for o in q.options
        )
        many = " (several may be chosen)" if q.multi_select else ""
        lines.append(f"- {q.question}{many} Options: {options}")
    return "\n".join(lines)

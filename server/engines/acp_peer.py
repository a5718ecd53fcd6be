"""The client side of the `acp` engine: what an external ACP agent sends us, in our vocabulary.

Its `session/update`s become our events, its permission requests our permission interactions,
its form elicitations our questions. Every interaction runs inside the current turn's task group,
so a cancelled turn answers the agent `cancelled` instead of leaving it waiting.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, TypeGuard, get_args

from acp import schema

from protocol.methods import PermissionOption, Question, QuestionOption, ToolCallRef
from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Diff,
    Location,
    Plan,
    PlanEntry,
    SessionUpdateKind,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    ToolStatus,
)
from server.engines.peer import PeerTurn
from server.tools.names import canonical_name
from server.turn import UserNotReachable

log = logging.getLogger(__name__)

OUR_KINDS = get_args(ToolKind)
CANCELLED = schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))


@dataclass
class PeerState:
    """What the agent told us about its session outside of turns."""

    turn: PeerTurn | None = None
    mode: str | None = None
    options: dict[str, schema.SessionConfigOptionSelect] = field(default_factory=dict)

    def track(self, update: Any) -> None:
        if isinstance(update, schema.CurrentModeUpdate):
            self.mode = update.current_mode_id
        elif isinstance(update, schema.ConfigOptionUpdate):
            self.set_options(update.config_options)

    def set_options(self, options: list[Any] | None) -> None:
        for option in options or []:
            if isinstance(option, schema.SessionConfigOptionSelect):
                self.options[option.id] = option


class PeerClient:
    """What the external agent may call on us. Deliberately not an `acp.Client` subclass: a
    method we do not implement must answer "method not found", not null."""

    def __init__(self) -> None:
        self.state = PeerState()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # Translated before any await: the prompt's response may be handled right after.
        self.state.track(update)
        turn = self.state.turn
        if turn is None:
            return
        for event in translate(update, turn):
            turn.sink.emit(event)

    async def request_permission(
        self, session_id: str, tool_call: schema.ToolCallUpdate, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        turn = self.state.turn
        if turn is None:
            return CANCELLED
        ref = ToolCallRef(
            tool_call_id=tool_call.tool_call_id,
            name=turn.names.get(tool_call.tool_call_id) or tool_name(tool_call),
            title=tool_call.title or tool_call.tool_call_id,
            input=tool_call.raw_input if isinstance(tool_call.raw_input, dict) else {},
        )
        ours = our_options(options)
        reply = await turn.interact(lambda: turn.sink.request_permission(ref, ours))
        chosen = None
        if reply is not None and not isinstance(reply, Exception):
            if reply.outcome.outcome == "selected":
                chosen = peer_option(options, reply.outcome.option_id)
        elif isinstance(reply, UserNotReachable):
            chosen = next((o for o in options if o.kind == "reject_once"), None)
        if chosen is None:
            return CANCELLED
        if chosen.kind.startswith("reject"):
            turn.rejected.add(tool_call.tool_call_id)
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        )

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        turn = self.state.turn
        requested = getattr(mode, "requested_schema", None)
        if turn is None or requested is None:
            return schema.DeclineElicitationResponse(action="decline")
        keys, questions = questions_from_schema(message, requested)
        reply = await turn.interact(
            lambda: turn.sink.ask_question(questions, timeout=turn.question_timeout)
        )
        if reply is None or isinstance(reply, Exception):
            return schema.CancelElicitationResponse(action="cancel")
        if reply.declined or not reply.answers:
            return schema.DeclineElicitationResponse(action="decline")
        content = {
            k: reply.answers[q.question]
            for k, q in zip(keys, questions, strict=True)
            if q.question in reply.answers
        }
        return schema.AcceptElicitationResponse(action="accept", content=content)


# -- permissions -------------------------------------------------------------------------------


def our_options(options: list[Any]) -> list[PermissionOption]:
    """The agent's options, one per kind, with the kind as id (what our clients answer)."""
    seen: dict[str, PermissionOption] = {}
    for o in options:
        seen.setdefault(o.kind, PermissionOption(option_id=o.kind, name=o.name, kind=o.kind))
    return list(seen.values())


def peer_option(options: list[Any], chosen: str | None) -> Any:
    by_id = next((o for o in options if o.option_id == chosen), None)
    return by_id or next((o for o in options if o.kind == chosen), None)


# -- updates -----------------------------------------------------------------------------------


def block_text(block: Any) -> str:
    if isinstance(block, schema.TextContentBlock):
        return block.text
    if isinstance(block, schema.ResourceContentBlock):
        return block.uri
    return ""


def tool_name(call: Any) -> str:
    meta = call.field_meta or {}
    named = (meta.get("agentls") or {}).get("toolName")
    claude = (meta.get("claudeCode") or {}).get("toolName")
    return named or (claude and canonical_name(claude)) or call.kind or "tool"


def translate(update: Any, turn: PeerTurn) -> list[SessionUpdateKind]:
    if isinstance(update, schema.AgentMessageChunk):
        text = block_text(update.content)
        return [AgentMessageChunk(text=text)] if text else []
    if isinstance(update, schema.AgentThoughtChunk):
        text = block_text(update.content)
        return [AgentThoughtChunk(text=text)] if text else []
    if isinstance(update, schema.ToolCallStart):
        return tool_call(update, turn)
    if isinstance(update, schema.ToolCallProgress):
        return tool_progress(update, turn)
    if isinstance(update, schema.AgentPlanUpdate):
        entries = [
            PlanEntry(id=str(i + 1), content=e.content, status=e.status)
            for i, e in enumerate(update.entries)
        ]
        return [Plan(entries=entries)]
    return []


def tool_call(update: schema.ToolCallStart, turn: PeerTurn) -> list[SessionUpdateKind]:
    name = tool_name(update)
    turn.names[update.tool_call_id] = name
    kind = update.kind if _is_our_kind(update.kind) else "other"
    locations = [Location(path=loc.path, line=loc.line) for loc in update.locations or []]
    start = ToolCall(
        tool_call_id=update.tool_call_id,
        name=name,
        title=update.title,
        tool_kind=kind,
        input=update.raw_input if isinstance(update.raw_input, dict) else {},
        locations=locations or None,
    )
    return [start, *tool_progress(update, turn)]


def _is_our_kind(kind: str | None) -> TypeGuard[ToolKind]:
    return kind in OUR_KINDS


def tool_progress(update: Any, turn: PeerTurn) -> list[SessionUpdateKind]:
    status = update.status
    if status not in ("in_progress", "completed", "failed"):
        return []
    text = content_text(update)
    if status == "failed":
        failed: ToolStatus = "denied" if update.tool_call_id in turn.rejected else "failed"
        return [ToolCallUpdate(tool_call_id=update.tool_call_id, status=failed, error=text)]
    diff = next(
        (
            Diff(path=c.path, old_text=c.old_text, new_text=c.new_text)
            for c in update.content or []
            if isinstance(c, schema.FileEditToolCallContent)
        ),
        None,
    )
    return [
        ToolCallUpdate(
            tool_call_id=update.tool_call_id,
            status=status,
            output=text if status == "completed" else None,
            diff=diff,
        )
    ]


def content_text(update: Any) -> str | None:
    texts = [
        block_text(c.content)
        for c in update.content or []
        if isinstance(c, schema.ContentToolCallContent)
    ]
    if any(texts):
        return "\n".join(t for t in texts if t)
    raw = update.raw_output
    if raw is None:
        return None
    if isinstance(raw, dict) and isinstance(raw.get("output"), str):
        return raw["output"]
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


# -- questions ---------------------------------------------------------------------------------


def questions_from_schema(message: str, requested: Any) -> tuple[list[str], list[Question]]:
    """An elicitation form as our questions: one per field, choices from its enum options."""
    keys, questions = [], []
    for key, prop in (requested.properties or {}).items():
        options, multi = field_choices(prop)
        text = getattr(prop, "description", None) or getattr(prop, "title", None) or message
        keys.append(key)
        questions.append(
            Question(
                question=text,
                header=(getattr(prop, "title", None) or key)[:12],
                options=[QuestionOption(label=label) for label in options],
                multi_select=multi,
            )
        )
    return keys, questions


def field_choices(prop: Any) -> tuple[list[str], bool]:
    if isinstance(prop, schema.ElicitationMultiSelectPropertySchema):
        items = prop.items
        if isinstance(items, schema.TitledMultiSelectItems):
            return [o.const for o in items.any_of], True
        return list(getattr(items, "enum", None) or []), True
    if isinstance(prop, schema.ElicitationStringPropertySchema):
        if prop.one_of:
            return [o.const for o in prop.one_of], False
        return list(prop.enum or []), False
    if isinstance(prop, schema.ElicitationBooleanPropertySchema):
        return ["true", "false"], False
    return [], False

"""Claude Code stream-json frames as agentls events, for the `claude-code` engine.

Text and thinking stream from `stream_event` deltas (`--include-partial-messages`); tool calls
come from `assistant` frames, their results from `user` frames, and a step ends at
`message_stop` (or, without partial messages, at the turn's `result`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from protocol.methods import Question, QuestionOption
from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Plan,
    PlanEntry,
    PlanStatus,
    SessionUpdateKind,
    StepFinish,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    ToolStatus,
    Usage,
)
from server.tools.names import canonical_name

# Claude Code tool names (and agentls's names for its tools in that dialect) -> tool kind.
KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "LS": "read",
    "NotebookRead": "read",
    "Write": "edit",
    "Edit": "edit",
    "MultiEdit": "edit",
    "EditHashed": "edit",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "BashOutput": "execute",
    "KillShell": "execute",
    "Git": "execute",
    "Grep": "search",
    "Glob": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "TodoWrite": "think",
    "AskUserQuestion": "think",
    "Task": "think",
}
TITLE_KEYS = ("file_path", "path", "command", "pattern", "url", "query", "description")
PLAN_STATUSES = ("pending", "in_progress", "completed", "cancelled")


def cc_usage(usage: dict[str, Any] | None) -> Usage:
    usage = usage or {}
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
    )


def _plan_status(value: Any) -> PlanStatus:
    return value if value in PLAN_STATUSES else "pending"


def title_of(name: str, args: dict[str, Any]) -> str:
    detail = next((str(args[k]) for k in TITLE_KEYS if isinstance(args.get(k), str)), "")
    return f"{name} {detail[:120]}".strip()


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def plan_of(args: dict[str, Any]) -> Plan | None:
    todos = args.get("todos")
    if not isinstance(todos, list):
        return None
    entries = [
        PlanEntry(
            id=str(t.get("id") or i + 1),
            content=str(t.get("content") or ""),
            status=_plan_status(t.get("status")),
        )
        for i, t in enumerate(todos)
        if isinstance(t, dict)
    ]
    return Plan(entries=entries)


def questions_of(args: dict[str, Any]) -> list[Question]:
    """AskUserQuestion's input ({questions: [{question, header, options, multiSelect}]})."""
    questions = []
    for q in args.get("questions") or []:
        options = [
            QuestionOption(label=str(o.get("label")), description=o.get("description"))
            for o in q.get("options") or []
            if isinstance(o, dict) and o.get("label")
        ]
        questions.append(
            Question(
                question=str(q.get("question") or ""),
                header=q.get("header"),
                options=options,
                multi_select=bool(q.get("multiSelect")),
            )
        )
    return questions


@dataclass
class FrameReader:
    """One turn's frames in, events out."""

    names: dict[str, str] = field(default_factory=dict)
    denied: set[str] = field(default_factory=set)
    streamed: set[str] = field(default_factory=set)
    """Messages whose text arrived as deltas (their `assistant` text is not repeated)."""
    steps: int = 0
    _message: str = ""
    _stop: str = "end_turn"
    _usage: dict[str, Any] = field(default_factory=dict)
    _unstepped: bool = False

    def on_frame(self, frame: dict[str, Any]) -> list[SessionUpdateKind]:
        kind = frame.get("type")
        if kind == "stream_event":
            return self._event(frame.get("event") or {})
        if kind == "assistant":
            return self._assistant(frame.get("message") or {})
        if kind == "user":
            return self._user(frame.get("message") or {})
        return []

    def finish(self) -> list[SessionUpdateKind]:
        """At the turn's result: close a step the frames never closed."""
        return self._step() if self._unstepped else []

    def _event(self, event: dict[str, Any]) -> list[SessionUpdateKind]:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self._message = message.get("id") or ""
            self._usage = dict(message.get("usage") or {})
        elif kind == "content_block_delta":
            return self._delta(event.get("delta") or {})
        elif kind == "message_delta":
            self._stop = (event.get("delta") or {}).get("stop_reason") or self._stop
            self._usage.update(event.get("usage") or {})
        elif kind == "message_stop":
            return self._step()
        return []

    def _delta(self, delta: dict[str, Any]) -> list[SessionUpdateKind]:
        self._unstepped = True
        if delta.get("type") == "text_delta" and delta.get("text"):
            self.streamed.add(self._message)
            return [AgentMessageChunk(text=delta["text"])]
        if delta.get("type") == "thinking_delta" and delta.get("thinking"):
            self.streamed.add(self._message)
            return [AgentThoughtChunk(text=delta["thinking"])]
        return []

    def _step(self) -> list[SessionUpdateKind]:
        self.steps += 1
        self._unstepped = False
        step = StepFinish(step=self.steps, finish_reason=self._stop, usage=cc_usage(self._usage))
        self._stop, self._usage = "end_turn", {}
        return [step]

    def _assistant(self, message: dict[str, Any]) -> list[SessionUpdateKind]:
        events: list[SessionUpdateKind] = []
        repeated = message.get("id") in self.streamed
        for block in message.get("content") or []:
            kind = block.get("type")
            if kind == "text" and block.get("text") and not repeated:
                events.append(AgentMessageChunk(text=block["text"]))
            elif kind == "thinking" and block.get("thinking") and not repeated:
                events.append(AgentThoughtChunk(text=block["thinking"]))
            elif kind == "tool_use":
                events.extend(self._tool_use(block))
        if events:
            self._unstepped = True
            self._usage = self._usage or dict(message.get("usage") or {})
        return events

    def _tool_use(self, block: dict[str, Any]) -> list[SessionUpdateKind]:
        cc_name, call_id = str(block.get("name") or "tool"), str(block.get("id") or "")
        raw = block.get("input")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        self.names[call_id] = cc_name
        call = ToolCall(
            tool_call_id=call_id,
            name=canonical_name(cc_name),
            title=title_of(cc_name, args),
            tool_kind=KINDS.get(cc_name, "other"),
            input=args,
        )
        plan = plan_of(args) if cc_name == "TodoWrite" else None
        return [call, plan] if plan else [call]

    def _user(self, message: dict[str, Any]) -> list[SessionUpdateKind]:
        events: list[SessionUpdateKind] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id") or "")
            text = result_text(block.get("content"))
            if not block.get("is_error"):
                update = ToolCallUpdate(tool_call_id=call_id, status="completed", output=text)
            else:
                status: ToolStatus = "denied" if call_id in self.denied else "failed"
                update = ToolCallUpdate(tool_call_id=call_id, status=status, error=text)
            events.append(update)
        return events

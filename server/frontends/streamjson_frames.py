"""Projection of agentls session updates into Claude Code stream-json frames."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any, assert_never

from protocol.methods import PromptResult
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
from server.frontends.streamjson_args import to_claude
from server.frontends.streamjson_shapes import (
    assistant_message,
    message_delta,
    result_usage,
    text_block,
)
from server.frontends.streamjson_usage import ModelUsageTotals
from server.tools.names import CLAUDE_CODE_NAMES

DIALECT_VERSION = "2.1.0"
"""The Claude Code stream-json dialect level these frames follow."""


def cc_tool_name(name: str) -> str:
    return CLAUDE_CODE_NAMES.get(name, name)


def new_uuid() -> str:
    return str(uuid.uuid4())


class TurnFrames:
    """Turns one turn's updates into frames; `result()` closes the turn."""

    def __init__(
        self,
        session_id: str,
        model: str,
        *,
        partial: bool,
        totals: ModelUsageTotals | None = None,
        cwd: Path | None = None,
    ):
        self.session_id = session_id
        self.cwd = cwd or Path.cwd()
        self.model = model
        self.partial = partial
        self.totals = totals or ModelUsageTotals()
        self.steps = 0
        self.last_text = ""
        self.denials: list[dict[str, Any]] = []
        self.tool_seconds = 0.0
        self._tools: dict[str, tuple[str, dict[str, Any], float]] = {}
        self._finished: set[str] = set()
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._step_text: list[str] = []
        self._message_id = ""
        self._block: str | None = None
        self._index = -1

    def envelope(self, frame: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
        return {
            **frame,
            "parent_tool_use_id": parent,
            "session_id": self.session_id,
            "uuid": new_uuid(),
        }

    def on_update(self, update: SessionUpdateKind) -> list[dict[str, Any]]:
        wire = update.to_wire()
        match update:
            case AgentMessageChunk():
                return self._on_agent_message_chunk(wire)
            case AgentThoughtChunk():
                return self._on_agent_thought_chunk(wire)
            case ToolCall():
                return self._on_tool_call(wire)
            case ToolCallUpdate():
                return self._on_tool_call_update(wire)
            case StepFinish(usage=usage):
                self.totals.add(self.model, usage)
                return self._on_step_finish(wire)
            case WorkspaceTrust():
                return self._on_workspace_trust(wire)
            case StoreWarning():
                return self._on_store_warning(wire)
            case Compaction(before=before):
                metadata = {"trigger": "auto", "pre_tokens": before}
                return [self._system("compact_boundary", {"compact_metadata": metadata})]
            case ModelSwitched(model=model):
                self.model = model  # the next assistant messages name it
                return []
            case ModeChanged(mode=mode):
                return [self._system("status", {"status": None, "permissionMode": mode})]
            case Plan():
                return []  # the todo_write call that made it is already a tool_use
            case PermissionNote() | QuestionNote():
                return []  # asked as `can_use_tool` control requests; denials go in the result
            case SubagentUpdate():
                return []  # a subagent's calls are shown under the task's tool_use
            case UserMessageChunk() | StreamRetry() | McpStatus():
                return []  # Claude Code has no frame for them inside a turn
            case Checkpoint():
                return []  # a turn's prompt uuid is its checkpoint (`rewind_files`)
            case TurnEnd(terminal=terminal):
                # The `result` frame is built from the prompt's outcome; a completed turn's text
                # that no model call ended (a `/todo` or `/model` reply) is its answer.
                return self._on_unstepped_text() if terminal == "completed" else []
            case _:
                assert_never(update)

    def _system(self, subtype: str, fields: dict[str, Any]) -> dict[str, Any]:
        frame = {"type": "system", "subtype": subtype, **fields}
        return {**frame, "session_id": self.session_id, "uuid": new_uuid()}

    # -- assistant output ----------------------------------------------------------------

    def _on_agent_message_chunk(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        frames = self._flush_thinking() if self._thinking else []
        self._text.append(update["text"])
        self._step_text.append(update["text"])
        return frames + self._delta("text", {"type": "text_delta", "text": update["text"]})

    def _on_agent_thought_chunk(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        self._thinking.append(update["text"])
        return self._delta(
            "thinking",
            {"type": "thinking_delta", "thinking": update["text"], "estimated_tokens": None},
        )

    def _on_tool_call(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        if update.get("parentToolCallId"):
            return [self._subagent_call(update)]
        frames = self._flush_thinking() + self._flush_text()
        name = cc_tool_name(update["name"])
        args = to_claude(update["name"], update["input"], self.cwd)
        self._tools[update["toolCallId"]] = (name, args, 0.0)
        block = {"type": "tool_use", "id": update["toolCallId"], "name": name, "input": args}
        if self.partial:
            frames += self._start_block("tool_use", {**block, "input": {}})
            frames += self._event(
                {
                    "type": "content_block_delta",
                    "index": self._index,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": json.dumps(args),
                    },
                }
            )
        return [*frames, self._assistant([block])]

    def _subagent_call(self, update: dict[str, Any]) -> dict[str, Any]:
        """A subagent's call: a message of its own, under the task's `tool_use` (as Claude Code
        reports what its Task tool's agent does), never streamed as partial events."""
        name = cc_tool_name(update["name"])
        args = to_claude(update["name"], update["input"], self.cwd)
        self._tools[update["toolCallId"]] = (name, args, 0.0)
        block = {"type": "tool_use", "id": update["toolCallId"], "name": name, "input": args}
        message = self._message(f"msg_{uuid.uuid4().hex[:24]}", [block])
        return self.envelope({"type": "assistant", "message": message}, update["parentToolCallId"])

    def _on_tool_call_update(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        call_id, status = update["toolCallId"], update["status"]
        name, args, started = self._tools.get(call_id, ("", {}, 0.0))
        if status == "in_progress":
            self._tools[call_id] = (name, args, time.monotonic())
            return []
        self._finished.add(call_id)
        if started:
            self.tool_seconds += time.monotonic() - started
        if status == "denied":
            self.denials.append({"tool_name": name, "tool_use_id": call_id, "tool_input": args})
        is_error = status != "completed"
        content = update.get("output") if not is_error else update.get("error")
        result = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": content or "",
            "is_error": is_error,
        }
        message = {"role": "user", "content": [result]}
        return [self.envelope({"type": "user", "message": message}, update.get("parentToolCallId"))]

    def running_call(self, name: str) -> str | None:
        """The latest call of the tool (Claude Code name) that has no result yet."""
        running = [i for i, t in self._tools.items() if t[0] == name and i not in self._finished]
        return running[-1] if running else None

    def _on_workspace_trust(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        note = {k: update[k] for k in ("trusted", "cwd", "ignored")}
        if update.get("broad"):
            note["broad"] = True
        return [self._system("workspace_trust", note)]

    def _on_store_warning(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        note = {"error": update["error"], "pending": update["pending"]}
        return [self._system("store_warning", note)]

    def _on_unstepped_text(self, usage: dict[str, int] | None = None) -> list[dict[str, Any]]:
        """The step's thinking and text as its assistant message; its text is the answer so far."""
        frames = self._flush_thinking() + self._flush_text(usage)
        if self._step_text:
            self.last_text = "".join(self._step_text)
            self._step_text = []
        return frames

    def _on_step_finish(self, update: dict[str, Any]) -> list[dict[str, Any]]:
        self.steps += 1
        frames = self._on_unstepped_text(update["usage"])
        if self.partial and self._message_id:
            frames += self._stop_block()
            reason = {"tool_use": "tool_use", "max_tokens": "max_tokens"}.get(
                update["finishReason"], "end_turn"
            )
            frames += self._event(message_delta(reason, update["usage"]))
            frames += self._event({"type": "message_stop"})
        self._message_id = ""
        return frames

    # -- helpers -------------------------------------------------------------------------

    def _ensure_message(self) -> list[dict[str, Any]]:
        if self._message_id:
            return []
        self._message_id = f"msg_{uuid.uuid4().hex[:24]}"
        self._index = -1
        if not self.partial:
            return []
        message = assistant_message(self._message_id, self.model, [])
        return self._event({"type": "message_start", "message": message})

    def _assistant(
        self, content: list[dict[str, Any]], usage: dict[str, int] | None = None
    ) -> dict[str, Any]:
        self._ensure_message()
        message = self._message(self._message_id, content, usage)
        return self.envelope({"type": "assistant", "message": message})

    def _message(
        self, message_id: str, content: list[dict[str, Any]], usage: dict[str, int] | None = None
    ) -> dict[str, Any]:
        return assistant_message(message_id, self.model, content, usage)

    def _flush_text(self, usage: dict[str, int] | None = None) -> list[dict[str, Any]]:
        if not self._text:
            return []
        text, self._text = "".join(self._text), []
        return [self._assistant([text_block(text)], usage)]

    def _flush_thinking(self) -> list[dict[str, Any]]:
        if not self._thinking:
            return []
        thinking, self._thinking = "".join(self._thinking), []
        return [self._assistant([{"type": "thinking", "thinking": thinking, "signature": ""}])]

    def _delta(self, block: str, delta: dict[str, Any]) -> list[dict[str, Any]]:
        if not self.partial:
            self._ensure_message()
            return []
        frames = self._ensure_message()
        if self._block != block:
            empty = {
                "text": text_block(""),
                "thinking": {"type": "thinking", "thinking": "", "signature": ""},
            }[block]
            frames += self._start_block(block, empty)
        return frames + self._event(
            {"type": "content_block_delta", "index": self._index, "delta": delta}
        )

    def _start_block(self, block: str, content_block: dict[str, Any]) -> list[dict[str, Any]]:
        frames = self._ensure_message() + self._stop_block()
        self._index += 1
        self._block = block
        return frames + self._event(
            {"type": "content_block_start", "index": self._index, "content_block": content_block}
        )

    def _stop_block(self) -> list[dict[str, Any]]:
        if self._block is None:
            return []
        self._block = None
        return self._event({"type": "content_block_stop", "index": self._index})

    def _event(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        return [self.envelope({"type": "stream_event", "event": event})]

    # -- the end -------------------------------------------------------------------------

    def result(self, outcome: PromptResult, duration_ms: int) -> dict[str, Any]:
        subtype, reason, is_error = result_kind(outcome)
        self.totals.close_turn(self.model, outcome.usage)
        frame: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": duration_ms,
            "duration_api_ms": max(0, duration_ms - int(self.tool_seconds * 1000)),
            "num_turns": self.steps,
            "stop_reason": outcome.stop_reason,
            "session_id": self.session_id,
            "total_cost_usd": self.totals.cost_usd(),
            "usage": result_usage(outcome.usage.to_wire()),
            "modelUsage": self.totals.to_frame(),
            "permission_denials": self.denials,
            "terminal_reason": reason,
            "uuid": new_uuid(),
        }
        if subtype == "success":
            frame["result"] = self.last_text
        else:
            frame["errors"] = [outcome.error] if outcome.error else []
        return frame


def result_kind(outcome: PromptResult) -> tuple[str, str, bool]:
    """(subtype, terminal_reason, is_error) for a turn's terminal."""
    if outcome.terminal == "completed":
        if outcome.stop_reason == "max_turn_requests":
            return "error_max_turns", "max_turns", True
        return "success", "completed", False
    if outcome.terminal == "aborted":
        return "error_during_execution", "aborted_streaming", True
    if outcome.terminal == "timed_out":
        return "error_during_execution", "timeout", True
    return "error_during_execution", "error", True

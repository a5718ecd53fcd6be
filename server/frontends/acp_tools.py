"""Tool-call cards for `agentls acp`: what the editor is shown of each call, from its start to
its close.

An edit or write shows the change it proposes (ACP `diff` content) from the start, so the
permission request that may follow carries it too; a finished call shows its output as text a
person reads (the file's text, the command's output), and `rawOutput` is the result object.
`ToolCards` remembers the cards of each session not yet closed, so a turn that ends leaves none
open on the client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from acp import schema as acp

from protocol.methods import ToolCallRef
from protocol.updates import ToolCall, ToolCallUpdate

MAX_PREVIEW = 2 * 1024 * 1024
"""Files larger than this get a diff of the replaced text only."""
WRITES = frozenset({"write_file", "Write"})
EDITS = frozenset({"edit_file", "Edit"})
LINE_EDITS = frozenset({"edit_file_hashed"})
LINE_NUMBER = re.compile(r"^\d+: ", re.MULTILINE)


def text_content(text: str) -> acp.ContentToolCallContent:
    return acp.ContentToolCallContent(
        type="content", content=acp.TextContentBlock(type="text", text=text)
    )


def nested(meta: dict[str, Any], parent: str | None) -> dict[str, Any]:
    """ACP has no nesting: a subagent's call names its `task` call in `_meta`."""
    return {**meta, "parentToolCallId": parent} if parent else meta


def tool_call_start(update: ToolCall, *, before: str | None = None) -> acp.ToolCallStart:
    """The card; an edit's proposal is made against `before` when given (the editor's buffer),
    else against the disk."""
    locations = [
        acp.ToolCallLocation(path=loc.path, line=loc.line) for loc in update.locations or []
    ]
    diff = proposed_diff(update, before)
    return acp.ToolCallStart(
        session_update="tool_call",
        tool_call_id=update.tool_call_id,
        title=update.title,
        kind=update.tool_kind,
        status="pending",
        raw_input=update.input,
        content=[diff] if diff else None,
        locations=locations or None,
        field_meta={"agentls": nested({"toolName": update.name}, update.parent_tool_call_id)},
    )


def tool_call_progress(update: ToolCallUpdate, name: str | None = None) -> acp.ToolCallProgress:
    content: list[Any] = []
    if update.diff is not None:
        content.append(
            acp.FileEditToolCallContent(
                type="diff",
                path=update.diff.path,
                old_text=update.diff.old_text,
                new_text=update.diff.new_text,
            )
        )
    failed = update.status in ("failed", "denied")
    if failed and update.error:
        content.append(text_content(update.error))
    elif update.output and update.diff is None:
        content.append(text_content(readable(update.output, name)))
    return acp.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=update.tool_call_id,
        status="failed" if update.status == "denied" else update.status,
        content=content or None,
        raw_output=raw_output(update.output) if update.output is not None else None,
        field_meta={"agentls": nested({}, update.parent_tool_call_id)}
        if update.parent_tool_call_id
        else None,
    )


# -- proposed changes -------------------------------------------------------------------------


def proposed_diff(
    update: ToolCall, before: str | None = None
) -> acp.FileEditToolCallContent | None:
    """The whole-file change an edit or write call asks for, against `before` or the file as
    the disk has it now (just the replaced text when it cannot be read or the text is absent)."""
    if update.name not in WRITES | EDITS | LINE_EDITS or not update.locations:
        return None
    path, args = update.locations[0].path, update.input
    if update.name in LINE_EDITS:
        old, new = args.get("expected_line"), args.get("new_line")
        if not (isinstance(old, str) and isinstance(new, str)):
            return None
        return diff(path, old, new)
    before = file_text(Path(path)) if before is None else before
    if update.name in WRITES:
        content = args.get("content")
        return diff(path, before, content) if isinstance(content, str) else None
    old, new = args.get("old_string"), args.get("new_string")
    if not (isinstance(old, str) and isinstance(new, str)) or not old:
        return None
    if before is None or old not in before:
        return diff(path, old, new)
    after = before.replace(old, new) if args.get("replace_all") else before.replace(old, new, 1)
    return diff(path, before, after)


def diff(path: str, old: str | None, new: str) -> acp.FileEditToolCallContent:
    return acp.FileEditToolCallContent(type="diff", path=path, old_text=old, new_text=new)


def file_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_PREVIEW:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# -- results ------------------------------------------------------------------------------------


def raw_output(output: str) -> Any:
    """The result object the model got (its text when it is not JSON, e.g. cut at the cap)."""
    try:
        return json.loads(output)
    except ValueError:
        return output


def readable(output: str, name: str | None) -> str:
    """A tool's result as a person reads it: a file's text, a command's output, else JSON."""
    result = raw_output(output)
    if not isinstance(result, dict):
        return output
    text, note = result.get("content"), result.get("note")
    if isinstance(text, str):
        body = LINE_NUMBER.sub("", text) if name == "read_file" else text
        shown = fenced(body) if body else ""
    elif isinstance(result.get("output"), str):
        shown = fenced(result["output"]) if result["output"] else ""
        code = result.get("exitCode")
        if code not in (None, 0):
            note = f"exit code {code}"
    else:
        shown = fenced(json.dumps(result, indent=2, ensure_ascii=False), "json")
    parts = [p for p in (shown, f"*{note}*" if isinstance(note, str) and note else "") if p]
    return "\n\n".join(parts) or "(no output)"


def fenced(text: str, language: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.removesuffix(chr(10))}\n{fence}"


# -- the cards of each session ------------------------------------------------------------------


class ToolCards:
    """The tool calls shown per session and not yet closed."""

    def __init__(self) -> None:
        self.open: dict[str, dict[str, acp.ToolCallStart]] = {}
        self.calls: dict[str, dict[str, ToolCall]] = {}

    def start(self, session_id: str, update: ToolCall) -> acp.ToolCallStart:
        card = tool_call_start(update)
        self.open.setdefault(session_id, {})[update.tool_call_id] = card
        self.calls.setdefault(session_id, {})[update.tool_call_id] = update
        return card

    def proposal_path(self, session_id: str, call_id: str) -> str | None:
        """The file an open edit or write card proposes a change to."""
        card = self.open.get(session_id, {}).get(call_id)
        has_diff = card is not None and any(c.type == "diff" for c in card.content or [])
        return card.locations[0].path if has_diff and card and card.locations else None

    def repropose(self, session_id: str, call_id: str, before: str) -> acp.ToolCallProgress:
        """The card's proposal made again against the editor's text of the file."""
        card = tool_call_start(self.calls[session_id][call_id], before=before)
        self.open[session_id][call_id] = card
        return acp.ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, content=card.content
        )

    def progress(self, session_id: str, update: ToolCallUpdate) -> acp.ToolCallProgress:
        cards = self.open.get(session_id, {})
        card = cards.get(update.tool_call_id)
        if update.status in ("completed", "failed", "denied"):
            cards.pop(update.tool_call_id, None)
            self.calls.get(session_id, {}).pop(update.tool_call_id, None)
        name = (card.field_meta or {}).get("agentls", {}).get("toolName") if card else None
        return tool_call_progress(update, name)

    def for_permission(self, session_id: str, call: ToolCallRef) -> acp.ToolCallUpdate:
        """The permission request's `toolCall`: the card as shown, with the reason to ask."""
        card = self.open.get(session_id, {}).get(call.tool_call_id)
        content: list[Any] = [text_content(call.reason)] if call.reason else []
        content.extend((card.content or []) if card else [])
        return acp.ToolCallUpdate(
            tool_call_id=call.tool_call_id,
            title=call.title,
            kind=card.kind if card else None,
            status="pending",
            raw_input=call.input,
            content=content or None,
            locations=card.locations if card else None,
        )

    def close_all(
        self, session_id: str, why: str, *, running: Collection[str] = ()
    ) -> list[acp.ToolCallProgress]:
        """A `failed` close for every card still open (the turn or the replay has ended), but
        those of the background subagents still `running` (task call ids), which go on."""
        kept = self.open.get(session_id, {})
        cards = {k: v for k, v in kept.items() if k.partition("/")[0] not in running}
        for call_id in cards:
            kept.pop(call_id, None)
            self.calls.get(session_id, {}).pop(call_id, None)
        return [
            acp.ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status="failed",
                content=[text_content(why)],
                field_meta=card.field_meta,
            )
            for call_id, card in cards.items()
        ]

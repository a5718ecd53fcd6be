"""Keeping the conversation inside the model's context window.

The session's history is never changed (the journal and resume keep all of it); compaction
changes the *view* sent to the model. Before each model call the request is estimated:

- above `threshold` (default 60 %) of the window, tool results older than the most recent
  `keep_tool_results` (default 20) are replaced by a short note;
- if still above `summarize_at` (default 85 %), older turns are summarized by the model and
  the summary stands in for them.

Each change emits `compaction {before, after}` in estimated tokens (about four characters per
token; an image counts as a flat 1,600). Config: `llm.contextWindow` (default: the catalogue's),
`llm.compaction {threshold, summarizeAt, keepToolResults}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from protocol.updates import Compaction
from server.agent.context import build_request
from server.agent.state import AgentSession
from server.agent.view import ContextView, Estimates
from server.providers import catalog
from server.providers.messages import (
    Finish,
    ImagePart,
    Message,
    ModelRequest,
    Part,
    TextDelta,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from server.providers.retry import StreamRestart
from server.turn import TurnSink

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
MESSAGE_OVERHEAD = 4
ELIDE_ABOVE = 400
"""Tool results shorter than this many characters are not worth eliding."""
TRANSCRIPT_LINE_CAP = 4_000

SUMMARY_SYSTEM = (
    "You summarize the earlier part of a coding session so the work can continue without it. "
    "Keep: the user's requests and constraints, decisions made, files read or changed (with "
    "paths), commands run and their outcomes, errors still open, and what was about to happen "
    "next. Be factual and compact; use short bullet points. Do not address the user."
)


@dataclass(frozen=True)
class CompactionSettings:
    window: int
    threshold: float = 0.6
    summarize_at: float = 0.85
    keep_tool_results: int = 20

    @classmethod
    def from_config(cls, llm: dict[str, Any], window: int) -> CompactionSettings:
        conf = llm.get("compaction") or {}
        return cls(
            window=int(llm.get("contextWindow") or window),
            threshold=float(conf.get("threshold", cls.threshold)),
            summarize_at=float(conf.get("summarizeAt", cls.summarize_at)),
            keep_tool_results=int(conf.get("keepToolResults", cls.keep_tool_results)),
        )


def settings_for(session: AgentSession) -> CompactionSettings:
    window = catalog.describe(session.model, session.settings.provider).context_window
    return CompactionSettings.from_config(session.llm, window)


# -- estimates -----------------------------------------------------------------------------------


def part_tokens(part: Part) -> int:
    if isinstance(part, ImagePart):
        return IMAGE_TOKENS
    if isinstance(part, TextPart | ThinkingPart):
        chars = len(part.text)
    elif isinstance(part, ToolCallPart):
        chars = len(part.name) + len(json.dumps(part.arguments))
    else:
        chars = len(part.content)
    return chars // CHARS_PER_TOKEN


def message_tokens(message: Message) -> int:
    return MESSAGE_OVERHEAD + sum(part_tokens(p) for p in message.parts)


def estimate(request: ModelRequest, estimates: Estimates | None = None) -> int:
    """The request's size in tokens, roughly. With `estimates` (the session's), only what
    changed since its previous request is counted: the step's new messages, not the history."""
    estimates = estimates or Estimates()
    fixed = (len(request.system) + estimates.tools(request, _tools_chars)) // CHARS_PER_TOKEN
    return fixed + estimates.messages(request.messages, message_tokens)


def _tools_chars(request: ModelRequest) -> int:
    return len(json.dumps([[t.name, t.description, t.parameters] for t in request.tools]))


# -- the two steps -------------------------------------------------------------------------------


async def fit(
    session: AgentSession, context: Message, sink: TurnSink
) -> tuple[Usage, ModelRequest]:
    """Compact the session's view when the next request would be too large; returns the usage
    of a summary call, if one was made, and the request to send (built once when it fits)."""
    settings = settings_for(session)
    estimates = session.view.estimates
    request = build_request(session, context)
    before = estimate(request, estimates)
    if before <= settings.threshold * settings.window:
        return Usage(), request
    elide_tool_results(session.history, session.view, settings.keep_tool_results)
    request = build_request(session, context)
    after = estimate(request, estimates)
    usage = Usage()
    if after > settings.summarize_at * settings.window:
        usage = await summarize(session, settings)
        request = build_request(session, context)
        after = estimate(request, estimates)
    if after < before:
        sink.emit(Compaction(before=before, after=after))
    return usage, request


def elide_tool_results(history: list[Message], view: ContextView, keep: int) -> None:
    parts = [p for m in history if m.role == "tool" for p in m.parts]
    results = [p for p in parts if isinstance(p, ToolResultPart)]
    old = results[: max(0, len(results) - keep)]
    view.elided.update(p.tool_call_id for p in old if len(p.content) > ELIDE_ABOVE)


def choose_cut(history: list[Message], view: ContextView, budget: int) -> int:
    """Where the kept tail starts: the earliest message boundary whose tail fits `budget`, else
    the latest one. A tail never starts with tool results (they belong to the call before)."""
    starts = [i for i in range(view.summarized + 1, len(history)) if history[i].role != "tool"]
    tail = 0
    sizes: dict[int, int] = {}
    for i in range(len(history) - 1, view.summarized, -1):
        tail += message_tokens(view.apply([history[i]])[0])
        sizes[i] = tail
    fitting = [i for i in starts if sizes[i] <= budget]
    if fitting:
        return fitting[0]
    return starts[-1] if starts else view.summarized


async def summarize(session: AgentSession, settings: CompactionSettings) -> Usage:
    view = session.view
    cut = choose_cut(session.history, view, int(settings.window * settings.threshold / 2))
    if cut <= view.summarized:
        return Usage()
    older = view.messages(session.history[:cut])
    prompt = (
        f"Summarize this earlier part of our session:\n\n{transcript(older, settings.window * 2)}"
    )
    request = ModelRequest(
        model=session.model,
        system=SUMMARY_SYSTEM,
        messages=[Message("user", [TextPart(prompt)])],
        options=session.call_options(thinking_on=False),
    )
    text, usage = await complete(session, request)
    view.summary, view.summarized = text.strip() or "(nothing to keep)", cut
    return usage


def transcript(messages: list[Message], cap: int) -> str:
    """The messages as plain text, each line capped, the whole capped to its last `cap` chars."""
    lines = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, TextPart) and part.text:
                lines.append(f"{message.role}: {part.text}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"assistant called {part.name}({json.dumps(part.arguments)})")
            elif isinstance(part, ToolResultPart):
                lines.append(f"{part.name} returned: {part.content}")
            elif isinstance(part, ImagePart):
                lines.append(f"{message.role}: [image]")
    text = "\n".join(line[:TRANSCRIPT_LINE_CAP] for line in lines)
    return text[-cap:]


async def complete(session: AgentSession, request: ModelRequest) -> tuple[str, Usage]:
    """One model call collected into its text (a retried attempt starts the text afresh)."""
    text: list[str] = []
    usage = Usage()
    async for event in session.stream(request):
        if isinstance(event, StreamRestart):
            text = []
        elif isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, Finish):
            usage = event.usage
    return "".join(text), usage

"""Re-running a recorded turn offline: the model's recorded answers, our real tools, a scratch
copy of the workspace.

The copy is rolled back to how the turn found it: every file the turn (or a later turn) wrote
gets its content from before the first recorded write (files the turn created are removed).
Absolute paths of the original workspace in the recorded tool calls point into the copy.
Commands run in a sandbox over the copy, the web and MCP servers are not reached
(`server.sessions.effects`). Permission requests get the answers the user gave; a call the user
was not asked about is allowed when the original ran it, and refused otherwise.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    PromptParams,
    PromptResult,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionUpdateParams,
)
from server.agent.subagents import running_subagent
from server.engines.native import NativeEngine
from server.policy.confined import Escaped, parts_beneath, unlink_beneath, write_beneath
from server.providers.messages import ToolCallReady
from server.providers.replay import RecordedCall, ReplayProvider
from server.sessions.effects import REPLAY_FLAGS, Effects, outcomes, stand_in
from server.sessions.model import ClientCapabilities, Session
from server.sessions.recording import recording_factory
from server.sessions.reports import ReportTurns
from server.sessions.service import SessionService
from server.sessions.store import Store
from server.sessions.traces import SessionTrace, TraceError, TurnTrace


@dataclass
class ReplayRun:
    """What the replay streamed (paths mapped back to the original workspace) and how it ended."""

    updates: list[dict[str, Any]]
    result: PromptResult
    unused_calls: int
    recorded: list[str]
    """The calls that returned their recorded result instead of running."""
    session_id: str
    """The replay's own stored session (its trace can be exported and replayed in turn)."""


class ReplayChannel:
    """Stands in for the client: records updates, answers as the user answered."""

    def __init__(self, turn: TurnTrace):
        caps = turn.prompt.get("capabilities") or {}
        self.capabilities = ClientCapabilities(
            questions=bool(caps.get("questions")),
            permissions=bool(caps.get("permissions")),
            report_turns=bool(caps.get("reportTurns")),
        )
        self.updates: list[dict[str, Any]] = []
        self._permissions = dict(turn.permissions)
        self._questions = list(turn.questions)
        self._ran = {
            u["toolCallId"]
            for u in turn.updates
            if u.get("kind") == "tool_call_update" and u.get("status") == "in_progress"
        }

    def send_update(self, params: SessionUpdateParams) -> None:
        self.updates.append(params.update.to_wire())

    async def request_permission(self, params: RequestPermissionParams) -> RequestPermissionResult:
        call_id = params.tool_call.tool_call_id
        recorded = self._permissions.pop(call_id, None)
        ran = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        answer = recorded or (
            ran if call_id in self._ran else {"outcome": {"outcome": "cancelled"}}
        )
        return RequestPermissionResult.model_validate(answer)

    async def ask_question(self, params: AskQuestionParams) -> AskQuestionResult:
        if not self._questions:
            return AskQuestionResult(declined=True)
        return AskQuestionResult.model_validate(self._questions.pop(0))


def prepare_workspace(
    source: Path, original: Path, scratch: Path, turns: list[TurnTrace]
) -> list[str]:
    """Copy `source` to `scratch` and undo what `turns` wrote (their paths are under
    `original`, the recorded workspace). Returns notes on writes that could not be undone."""
    shutil.copytree(source, scratch, symlinks=True, dirs_exist_ok=True)
    notes = []
    for path, old in pre_images(turns).items():
        target = mapped(path, original, scratch)
        try:
            if target is None:
                raise Escaped(errno.EXDEV, "outside")
            if old is None:
                unlink_beneath(target, scratch)
            else:
                write_beneath(target, scratch, old.encode("utf-8"), create_folders=True)
        except Escaped:
            notes.append(f"{path} is outside the workspace; not restored")
    return notes


def pre_images(turns: list[TurnTrace]) -> dict[str, str | None]:
    """Each written file's content before its first recorded write (None: it did not exist)."""
    first: dict[str, str | None] = {}
    for turn in turns:
        for update in turn.updates:
            diff = update.get("diff") if update.get("kind") == "tool_call_update" else None
            if diff and diff["path"] not in first:
                first[diff["path"]] = diff.get("oldText")
    return first


def mapped(path: str, original: Path, scratch: Path) -> Path | None:
    """`path` (under `original`) in the copy; None when it leads out, `..` included."""
    try:
        return scratch.joinpath(*parts_beneath(Path(path), original))
    except Escaped:
        return None


def rewrite(value: Any, old: str, new: str) -> Any:
    """Every string in `value` with `old` replaced by `new`."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [rewrite(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: rewrite(v, old, new) for k, v in value.items()}
    return value


def redirect(calls: list[RecordedCall], old: str, new: str) -> list[RecordedCall]:
    """The recorded calls with tool-call arguments pointing into the scratch workspace."""
    out = []
    for call in calls:
        events = [
            ToolCallReady(replace(e.call, arguments=rewrite(e.call.arguments, old, new)))
            if isinstance(e, ToolCallReady)
            else e
            for e in call.events
        ]
        out.append(replace(call, events=events))
    return out


def offline_environ() -> dict[str, str]:
    """The environment with a placeholder for every provider key, so settings resolve offline
    (the replay provider never sends anything)."""
    from server.providers.registry import PROVIDERS

    keys = {p.key_env: "replay-offline" for p in PROVIDERS.values() if p.key_env}
    return {**keys, **os.environ}


async def run_turn(
    trace: SessionTrace,
    turn: TurnTrace,
    scratch: Path,
    *,
    recorded_effects: bool = False,
    store: Store | None = None,
) -> ReplayRun:
    """`recorded_effects`: calls that reach out return their recorded results. With a `store`
    (which the replay then owns and closes) the replay is stored as a session of its own."""
    if trace.session.get("engine", "native") != "native":
        raise TraceError(f"only native-engine turns can be replayed, not {trace.session['engine']}")
    original = str(trace.session["cwd"])
    calls = redirect(turn.calls, original, str(scratch))
    provider = ReplayProvider(calls, asking=asking_subagent)
    engine = NativeEngine(
        provider_factory=recording_factory(lambda _settings: provider), environ=offline_environ()
    )
    channel = ReplayChannel(turn)
    service = SessionService({"native": engine}, channel, flags=REPLAY_FLAGS, store=store)
    service.reports = NoReportTurns(service)
    effects = Effects(outcomes(turn.updates), use_recorded=recorded_effects)
    state = dict(turn.prompt.get("state") or trace.session.get("state") or {})
    history = trace.messages[: int(turn.prompt.get("historyLength", 0))]
    session_id = f"sess_{uuid.uuid4().hex[:16]}"
    try:
        session = await service.open_snapshot(
            session_id, scratch, "native", {**state, "history": history}
        )
        handle = session.handle
        handle.tools = stand_in(handle.tools, called_tools(calls), effects)
        if service.recorder:
            service.recorder.created(session, None)
        params = {"sessionId": session_id, "prompt": replay_prompt(turn)}
        if turn.prompt.get("options"):
            params["options"] = turn.prompt["options"]
        result = await service.prompt(PromptParams.model_validate(params))
        await outlived(session)
    finally:
        await service.close_all()
    updates = rewrite(channel.updates, str(scratch), original)
    return ReplayRun(updates, result, provider.remaining, effects.used, session_id)


class NoReportTurns(ReportTurns):
    """A replay re-runs one turn: background subagents that outlived it (the recording's
    client showed turns it did not prompt) run to their end, but report in no turn of their
    own; the turn's recording holds no such turn."""

    def wake(self, session_id: str) -> None:
        pass


OUTLIVED_WAIT_S = 600.0


async def outlived(session: Session) -> None:
    """Wait for the background subagents still running after the replayed turn ended."""
    background = session.engine.offers(session.handle).background
    with anyio.move_on_after(OUTLIVED_WAIT_S):
        for task in list(background.tasks.values()) if background else []:
            await task.done.wait()


def asking_subagent() -> str | None:
    running = running_subagent.get()
    return running.id if running else None


def called_tools(calls: list[RecordedCall]) -> list[str]:
    return [e.call.name for c in calls for e in c.events if isinstance(e, ToolCallReady)]


def needs_sandbox(turn: TurnTrace) -> bool:
    """Whether replaying `turn` runs commands (which only ever run in a sandbox)."""
    return any(
        u.get("kind") == "tool_call" and u.get("toolKind") == "execute" for u in turn.updates
    )


def replay_prompt(turn: TurnTrace) -> list[dict[str, Any]]:
    """The recorded prompt; images were not kept in the trace and are left out."""
    blocks = [b for b in turn.prompt.get("prompt", []) if b.get("type") != "image"]
    return blocks or [{"type": "text", "text": ""}]

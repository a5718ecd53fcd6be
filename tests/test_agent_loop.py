"""The agent loop on its own: an `AgentSession`, the scripted model, a real tool, no session
service and no front door."""

from __future__ import annotations

from pathlib import Path

from protocol.updates import StepFinish, ToolCall, ToolCallUpdate
from server.agent.loop import run_turn
from server.agent.state import AgentSession
from server.permissions import PermissionState
from server.providers.base import ProviderSettings
from server.providers.messages import Message, TextPart, ToolCallPart, ToolResultPart, Usage
from server.providers.scripted import ScriptedProvider, ScriptedReply
from server.tools.base import ToolContext
from server.tools.files import ReadFile
from server.turn import SessionSpec, UserNotReachable


class Sink:
    session_id, turn_id = "s1", "t1"

    def __init__(self) -> None:
        self.updates: list = []

    def emit(self, update) -> None:
        self.updates.append(update)

    async def request_permission(self, tool_call, options):
        raise UserNotReachable

    async def ask_question(self, questions, *, timeout):
        raise UserNotReachable


def agent_session(ws: Path, provider: ScriptedProvider) -> AgentSession:
    return AgentSession(
        spec=SessionSpec(session_id="s1", cwd=ws, config={}),
        settings=ProviderSettings(provider="scripted", model="scripted"),
        tools={"read_file": ReadFile()},
        tool_ctx=ToolContext(cwd=ws, session_id="s1"),
        permissions=PermissionState(mode="default"),
        factory=lambda settings: provider,
    )


async def test_a_turn_with_one_tool_call_leaves_the_whole_history(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    provider = ScriptedProvider.from_replies(
        [
            ScriptedReply(text="Let me look.", tool_calls=[("read_file", {"path": "notes.txt"})]),
            ScriptedReply(text="It says hello.", usage=Usage(30, 7)),
        ]
    )
    session, sink = agent_session(tmp_path, provider), Sink()
    user = Message("user", [TextPart("What is in notes.txt?")])

    outcome = await run_turn(session, user, sink)

    assert outcome.stop_reason == "end_turn"
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (40, 12)
    call = ToolCallPart("call_1", "read_file", {"path": "notes.txt"})
    assert [m.role for m in session.history] == ["user", "assistant", "tool", "assistant"]
    assert session.history[0] == user
    assert session.history[1] == Message("assistant", [TextPart("Let me look."), call])
    [result] = session.history[2].parts
    assert isinstance(result, ToolResultPart)
    assert (result.tool_call_id, result.name, result.is_error) == ("call_1", "read_file", False)
    assert "1: hello" in result.content
    assert session.history[3] == Message("assistant", [TextPart("It says hello.")])
    # the model saw the result on its second call; the turn context was never kept
    second = provider.requests[1]
    assert second.messages[: len(session.history) - 1] == session.history[:-1]
    assert [type(u) for u in sink.updates if isinstance(u, ToolCall | ToolCallUpdate)] == [
        ToolCall,
        ToolCallUpdate,
        ToolCallUpdate,
    ]
    assert sum(isinstance(u, StepFinish) for u in sink.updates) == 2

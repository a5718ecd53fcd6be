"""Mending a history so every tool call has its result and every result its call."""

from __future__ import annotations

from server.agent.pairing import mend
from server.providers.messages import Message, TextPart, ToolCallPart, ToolResultPart


def call(i: str) -> ToolCallPart:
    return ToolCallPart(i, "bash", {})


def result(i: str, text: str = "ok") -> ToolResultPart:
    return ToolResultPart(i, "bash", text)


def user(text: str) -> Message:
    return Message("user", [TextPart(text)])


def test_an_unanswered_call_gets_an_error_result_right_after_it():
    history = [user("go"), Message("assistant", [call("a"), call("b")]), user("again")]
    mended = mend(history, "why")
    assert history[2] == Message(
        "tool", [ToolResultPart("a", "bash", "why", True), ToolResultPart("b", "bash", "why", True)]
    )
    assert [m.role for m in history] == ["user", "assistant", "tool", "user"]
    assert (mended.inserted, mended.first_change, [c.id for c in mended.calls]) == (
        [2],
        2,
        ["a", "b"],
    )


def test_partial_results_are_kept_and_completed_in_call_order():
    history = [Message("assistant", [call("a"), call("b")]), Message("tool", [result("b")])]
    mended = mend(history, "why")
    assert history[1].parts == [ToolResultPart("a", "bash", "why", True), result("b")]
    assert mended.inserted == [] and mended.first_change == 1


def test_results_without_a_call_are_dropped():
    history = [user("go"), Message("tool", [result("x")]), Message("assistant", [call("a")])]
    history.append(Message("tool", [result("a"), result("stray")]))
    mend(history, "why")
    assert history == [
        user("go"),
        Message("assistant", [call("a")]),
        Message("tool", [result("a")]),
    ]


def test_a_valid_history_is_left_alone():
    history = [user("go"), Message("assistant", [call("a")]), Message("tool", [result("a")])]
    before = list(history)
    mended = mend(history, "why")
    assert history == before and mended.first_change is None and mended.calls == []

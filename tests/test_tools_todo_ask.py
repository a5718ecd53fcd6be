"""Rules of todo_write and ask_user_question (REFERENCE §Tools)."""

from __future__ import annotations

import anyio
import pytest
from pydantic import ValidationError

from protocol.methods import AskQuestionResult
from server.tools.ask import AskInput, AskUserQuestion
from server.tools.base import ToolContext, ToolError
from server.tools.todo import TodoInput, TodoWrite
from server.turn import UserNotReachable


class Sink:
    """Records plan events and answers questions from a queue."""

    def __init__(self, answer=None):
        self.events = []
        self.asked = []
        self.answer = answer

    def emit(self, update):
        self.events.append(update.to_wire())

    async def ask_question(self, questions, *, timeout):
        self.asked.append(([q.to_wire() for q in questions], timeout))
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.answer == "hang":
            with anyio.fail_after(timeout):
                await anyio.sleep(60)
        return AskQuestionResult.model_validate(self.answer)


def todo(id_, content="do it", status="pending"):
    return {"id": id_, "content": content, "status": status}


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(cwd=tmp_path, sink=Sink())


async def write(ctx, todos, **extra):
    return await TodoWrite().run(ctx, TodoInput.model_validate({"todos": todos, **extra}))


async def test_todo_write_replaces_bumps_revision_and_emits_plan(ctx):
    first = await write(ctx, [todo("1", status="in_progress"), todo("2")])
    second = await write(ctx, [todo("1", status="completed")])
    assert first["revision"] == 1
    assert second == {
        "revision": 2,
        "todos": [todo("1", status="completed")],
        "summary": "1 completed",
    }
    assert ctx.state["todos"] == [todo("1", status="completed")]
    assert ctx.sink.events[-1] == {"kind": "plan", "entries": [todo("1", status="completed")]}


@pytest.mark.parametrize(
    "payload",
    [
        {"todos": "not a list"},
        {"todos": [{"content": "x", "status": "pending"}]},
        {"todos": [todo("")]},
        {"todos": [todo("1", content="")]},
        {"todos": [todo("1", status="blocked")]},
    ],
)
def test_todo_write_rejects_malformed_input(payload):
    with pytest.raises(ValidationError):
        TodoInput.model_validate(payload)


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        ([todo("1"), todo("1")], r"duplicate id\(s\): 1"),
        ([todo("a", status="in_progress"), todo("b", status="in_progress")], "only one todo"),
        ([todo("  ")], "non-empty id"),
        ([todo("1", content="   ")], "non-empty content"),
    ],
)
async def test_invalid_write_leaves_the_list_unchanged(ctx, todos, message):
    await write(ctx, [todo("keep")])
    with pytest.raises(ToolError, match=message):
        await write(ctx, todos)
    assert ctx.state["todos"] == [todo("keep")] and ctx.state["todoRevision"] == 1


async def test_stale_revision_is_a_conflict(ctx):
    await write(ctx, [todo("1")])
    await write(ctx, [todo("1")], expected_revision=1)
    with pytest.raises(ToolError, match="REVISION_CONFLICT"):
        await write(ctx, [todo("2")], expected_revision=1)
    assert ctx.state["todos"] == [todo("1")]


async def ask(ctx, payload):
    return (await AskUserQuestion().run(ctx, AskInput.model_validate(payload))).content


async def test_simple_shape_becomes_one_question(tmp_path):
    sink = Sink({"answers": {"Tabs?": "tabs"}})
    result = await ask(
        ToolContext(cwd=tmp_path, sink=sink),
        {"question": "Tabs?", "options": ["tabs", "spaces"], "timeoutMs": 5000},
    )
    assert sink.asked == [
        (
            [
                {
                    "question": "Tabs?",
                    "multiSelect": False,
                    "options": [{"label": "tabs"}, {"label": "spaces"}],
                }
            ],
            5.0,
        )
    ]
    assert result == {"answers": {"Tabs?": "tabs"}, "summary": "The user answered:\n- Tabs? → tabs"}


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {
            "question": "a",
            "questions": [
                {"question": "b", "header": "h", "options": [{"label": "x"}, {"label": "y"}]}
            ],
        },
        {"questions": []},
        {"questions": [{"question": "q", "header": "h", "options": [{"label": "only"}]}]},
        {
            "questions": [
                {
                    "question": "q",
                    "header": "a header too long",
                    "options": [{"label": "x"}, {"label": "y"}],
                }
            ]
        },
        {
            "questions": [
                {"question": f"q{i}", "header": "h", "options": [{"label": "x"}, {"label": "y"}]}
                for i in range(5)
            ]
        },
        {"question": "q", "onTimeout": "explode"},
    ],
)
def test_ask_rejects_bad_shapes(payload):
    with pytest.raises(ValidationError):
        AskInput.model_validate(payload)


async def test_ask_outcomes(tmp_path):
    def ctx(answer):
        return ToolContext(cwd=tmp_path, sink=Sink(answer))

    unreachable = await ask(ctx(UserNotReachable("x")), {"question": "q"})
    assert unreachable == {
        "error": "user_not_reachable",
        "hint": "Non-interactive context. Proceed autonomously using best judgement.",
    }
    assert (await ask(ToolContext(cwd=tmp_path), {"question": "q"}))[
        "error"
    ] == "user_not_reachable"
    declined = await ask(ctx({"declined": True}), {"question": "q"})
    assert declined["error"] == "user_rejected" and "Do not assume consent" in declined["hint"]
    timeout = await ask(ctx("hang"), {"question": "q", "timeoutMs": 1000})
    assert timeout["error"] == "user_timeout"
    default = await ask(
        ctx("hang"),
        {"question": "q", "timeoutMs": 1000, "onTimeout": "useDefault", "defaultValue": "yes"},
    )
    assert default["answers"] == {"q": "yes"}
    skipped = await ask(ctx("hang"), {"question": "q", "timeoutMs": 1000, "onTimeout": "skip"})
    assert skipped["skipped"] is True

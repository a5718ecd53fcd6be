"""The local model's numbers are checked against what this turn's results show: a count must be
one the results state or one that can be counted in them, a line number one they show; over a
runtime double (no model)."""

from __future__ import annotations

import json

from server.providers import local_ground as ground
from server.providers import local_plan
from server.providers.messages import Message, ModelRequest, TextDelta, TextPart, ToolResultPart
from tests.test_provider_local import READ, ScriptedRuntime, collect

TABLE = ["id,name", "a,rent", "b,food", "c,books", "d,gifts"]
TESTS = ["import pytest", "", "def test_a():", "    assert 1", "", "def test_b():", "    assert 1"]


def read_turn(request: str, path: str, lines: list[str]) -> list[Message]:
    call = local_plan.to_call({"task": "read", "path": path})
    content = "\n".join(f"{n}: {line}" for n, line in enumerate(lines, 1))
    payload = {"content": content, "totalLines": len(lines), "startLine": 1}
    result = json.dumps({**payload, "endLine": len(lines)})
    return [
        Message("user", [TextPart(request)]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart(call.id, "read_file", result)]),
    ]


async def answer(messages: list[Message], *replies: str) -> tuple[str, ScriptedRuntime]:
    runtime = ScriptedRuntime(*(json.dumps({"answer": r}) for r in replies))
    req = ModelRequest(model="m", system="", messages=messages, tools=[READ])
    events = await collect(runtime, req)
    return "".join(e.text for e in events if isinstance(e, TextDelta)), runtime


async def test_a_count_that_is_only_a_line_number_of_the_file_is_retried() -> None:
    turn = read_turn("How many rows does t.csv have?", "t.csv", TABLE)
    text, runtime = await answer(turn, "t.csv has 3 rows.", "t.csv has 4 rows.")
    assert len(runtime.bodies) == 2
    assert "do not show 3" in runtime.bodies[1]["messages"][-1]["content"]
    assert text == "t.csv has 4 rows."


async def test_a_count_written_in_words_is_checked_too() -> None:
    turn = read_turn("How many rows does t.csv have?", "t.csv", TABLE)
    text, runtime = await answer(turn, "t.csv has two rows.", "t.csv has five lines.")
    assert "do not show 2" in runtime.bodies[1]["messages"][-1]["content"]
    assert text == "t.csv has five lines."


async def test_counts_that_can_be_counted_in_the_results_are_taken() -> None:
    turn = read_turn("How many test functions does t.py have?", "t.py", TESTS)
    text, runtime = await answer(turn, "t.py has 2 test functions, test_a and test_b.")
    assert text == "t.py has 2 test functions, test_a and test_b."
    assert len(runtime.bodies) == 1


async def test_a_line_number_the_results_do_not_show_is_retried() -> None:
    turn = read_turn("Where does t.py define test_b?", "t.py", TESTS)
    _, runtime = await answer(turn, "On line 9 of t.py.", "On line 6 of t.py.")
    assert "do not show 9" in runtime.bodies[1]["messages"][-1]["content"]


async def test_an_answer_quoting_the_worked_examples_is_retried_then_replaced() -> None:
    turn = read_turn("What is the first line of t.csv?", "t.csv", TABLE)
    text, runtime = await answer(turn, "It says 'Sow in March.'", "It says Sow in March.")
    assert "comes from the worked example" in runtime.bodies[1]["messages"][-1]["content"]
    assert "Sow in March" not in text and ground.CLOUD_HINT in text
    assert text.startswith("I am not sure of the answer. What I found: t.csv: 5 lines")


async def test_what_was_found_in_a_read_file_names_its_first_line() -> None:
    """An answer replaced for a count the results do not show still says what the file begins
    with: the question most asked of a read file (its first line) is answered by what was found."""
    turn = read_turn("Read t.csv and tell me its first line.", "t.csv", TABLE)
    text, _ = await answer(turn, "t.csv has 7 headings: id.", "t.csv has 9 columns.")
    assert text.startswith("I am not sure of the answer. What I found: t.csv: 5 lines")
    assert 'line 1: "id,name"' in text

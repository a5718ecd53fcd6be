"""The local-model evaluation's own checks (`python -m bench local-eval` runs the model): the
example markers are the worked examples' text and not the fixture's, and each checker refuses
the untouched fixture where the task asks for a change or a fact it does not state. One slow
test runs a task of each kind with the real model, as the bench does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bench import local_eval
from server.providers import local_model, local_prompt
from server.providers.messages import ToolSpec


def spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, description="", parameters={"type": "object", "properties": {}})


def test_the_markers_are_the_worked_examples_text_and_not_the_fixtures() -> None:
    offered = ("read_file", "list_dir", "grep", "edit_file")
    shots = json.dumps(local_prompt.example([spec(name) for name in offered]))
    fixture = json.dumps(local_eval.REPO)
    for marker in local_eval.EXAMPLE_MARKERS:
        assert marker in shots, marker
        assert marker.lower() not in fixture.lower(), marker
    assert local_eval.quotes_examples("water_plant is defined in greenhouse/care.py, line 12.")
    assert not local_eval.quotes_examples("monthly_total is defined in src/ledger/report.py.")


def test_there_are_thirty_tasks_of_every_kind() -> None:
    kinds = {task.kind for task in local_eval.TASKS}
    assert len(local_eval.TASKS) >= 30
    assert {"list", "define", "use", "line", "count", "summary", "edit", "missing"} <= kinds
    assert len({task.prompt for task in local_eval.TASKS}) == len(local_eval.TASKS)


def test_edit_checkers_refuse_the_untouched_fixture_and_take_the_edit(tmp_path: Path) -> None:
    ws = local_eval.make_repo(tmp_path / "ws")
    edits = [task for task in local_eval.TASKS if task.kind == "edit"]
    assert edits and not any(task.check("Done.", ws) for task in edits)
    settings = ws / "config" / "settings.ini"
    settings.write_text(settings.read_text().replace("EUR", "USD"))
    ideas = ws / "notes" / "ideas.txt"
    ideas.write_text(ideas.read_text() + "Support yearly reports\n")
    report = ws / "src" / "ledger" / "report.py"
    report.write_text(report.read_text().replace("format_amount", "format_cents"))
    (ws / "src" / "ledger" / "__init__.py").write_text('VERSION = "0.5.0"\n')
    accounts = ws / "src" / "ledger" / "accounts.py"
    accounts.write_text(accounts.read_text().replace("handle refunds", "handle refunds later"))
    assert all(task.check("Done.", ws) for task in edits)


def test_numbers_are_matched_whole() -> None:
    seven = local_eval.says_number(7)
    assert seven("It has 7 rows.", Path()) and seven("7", Path())
    assert not seven("It has 17 rows.", Path()) and not seven("version 0.7.1", Path())


def test_the_first_line_answer_of_a_listing_task_is_wrong(tmp_path: Path) -> None:
    ws = local_eval.make_repo(tmp_path / "ws")
    listing = local_eval.TASKS[0]
    assert not listing.check("The first line of report.py is `def monthly_total(rows):`.", ws)
    assert listing.check("accounts.py, report.py, io.py and __init__.py", ws)


def test_the_held_out_tasks_are_new_prompts_on_their_own_fixture(tmp_path: Path) -> None:
    prompts = {task.prompt for task in local_eval.TASKS}
    assert not prompts & {task.prompt for task in local_eval.HELD_OUT}
    assert {task.kind for task in local_eval.HELD_OUT} == {task.kind for task in local_eval.TASKS}
    fixture = json.dumps(local_eval.HELD_OUT_REPO).lower()
    assert not any(marker.lower() in fixture for marker in local_eval.EXAMPLE_MARKERS)
    ws = local_eval.make_repo(tmp_path / "ws", local_eval.HELD_OUT_REPO)
    edits = [task for task in local_eval.HELD_OUT if task.kind == "edit"]
    assert edits and not any(task.check("Done.", ws) for task in edits)
    app = ws / "web" / "app.js"
    app.write_text(app.read_text().replace("8080", "9090"))
    week = ws / "data" / "week.txt"
    week.write_text(week.read_text() + "Friday: curry\n")
    recipes = ws / "pantry" / "recipes.py"
    recipes.write_text(recipes.read_text().replace("<= 20", "<= 30"))
    assert all(task.check("Done.", ws) for task in edits)


def one_of_each_kind() -> list[local_eval.Task]:
    return list({task.kind: task for task in reversed(local_eval.TASKS)}.values())[::-1]


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.skipif(
    not local_model.available(),
    reason=f"the embedded local model is not installed ({local_model.INSTALL_HINT})",
)
def test_a_task_of_each_kind_with_the_real_model(tmp_path: Path) -> None:
    """The first task of each kind, through a real `agentls serve`, seeded as the bench runs
    them: nearly all right, none quoting the worked examples, every turn completed."""
    tasks = one_of_each_kind()
    local_model.ensure_model(local_model.DEFAULT_MODEL)
    rows = asyncio.run(local_eval.evaluate(tmp_path, tasks))
    for row in rows:
        print(f"{row['correct']!s:5} {row['seconds']:6.1f} s {row['prompt']!r}: {row['answer']!r}")
    assert [row["kind"] for row in rows] == [task.kind for task in tasks]
    assert all(row["terminal"] == "completed" for row in rows), rows
    assert not any(row["examples_quoted"] for row in rows), rows
    assert sum(bool(row["correct"]) for row in rows) >= len(rows) - 2, rows

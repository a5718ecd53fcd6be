"""The worked exchanges the local model is shown: one per kind of task a user asks first (list a
folder, find where a name is defined or used, count, summarize, make a one-line edit, a file that
is not there), all in one made-up greenhouse project so that nothing in them is true of a real
one. Results are the tools' own output, rendered as real results are (`local_results`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

Result = tuple[str, dict[str, Any], str]
"""(tool, arguments, output) as the tool returned it"""


@dataclass(frozen=True)
class Shot:
    request: str
    steps: list[tuple[dict[str, Any], Result]]
    answer: str

    @property
    def kinds(self) -> set[str]:
        return {str(s["task"]) for s, _ in self.steps if "task" in s}


def _read(path: str, lines: list[str]) -> Result:
    content = "\n".join(f"{n}: {line}" for n, line in enumerate(lines, 1))
    total = len(lines)
    output = {"content": content, "totalLines": total, "startLine": 1, "endLine": total}
    return "read_file", {"path": path}, json.dumps(output)


def _grep(pattern: str, matches: list[tuple[str, int, str]]) -> Result:
    found = [{"file": f, "line": n, "content": c} for f, n, c in matches]
    files = len({f for f, _, _ in matches})
    output = {"matchCount": len(found), "filesWithMatches": files, "matches": found}
    return "grep", {"pattern": pattern}, json.dumps({**output, "truncated": False})


GUIDE = ["# Growing guide", "Keep the soil damp.", "## Seedlings", "Sow in March.", "## Harvest"]
ALERTS = [
    '"""Frost warnings for the greenhouse sensors."""',
    "",
    "FROST_LIMIT = -2",
    "",
    "def check(reading):",
    "    if reading < FROST_LIMIT:",
    '        send("frost warning")',
]
SETTINGS = ["[watering]", "interval = 30", 'unit = "minutes"']

SHOTS = [
    Shot("What does HTTP status 404 mean?", [], "It means the server has no resource at that URL."),
    Shot(
        "Show me what the greenhouse/pumps directory contains.",
        [
            (
                {"task": "list", "path": "greenhouse/pumps"},
                (
                    "list_dir",
                    {"path": "greenhouse/pumps"},
                    json.dumps({"entries": ["drivers/", "schedule.py", "valve.py"]}),
                ),
            )
        ],
        "greenhouse/pumps holds 2 files, schedule.py and valve.py, and 1 folder, drivers/.",
    ),
    Shot(
        "I need the definition of water_plant: which module has it?",
        [
            (
                {"task": "find_definition", "name": "water_plant"},
                _grep("water_plant", [("greenhouse/care.py", 12, "def water_plant(bed, litres):")]),
            )
        ],
        "water_plant is defined in greenhouse/care.py, line 12.",
    ),
    Shot(
        "Does anything refer to FROST_LIMIT?",
        [
            (
                {"task": "find_text", "text": "FROST_LIMIT"},
                _grep(
                    "FROST_LIMIT",
                    [
                        ("greenhouse/alerts.py", 3, "FROST_LIMIT = -2"),
                        ("greenhouse/alerts.py", 9, "    if reading < FROST_LIMIT:"),
                        ("tests/test_alerts.py", 5, "    assert FROST_LIMIT < 0"),
                    ],
                ),
            )
        ],
        "FROST_LIMIT appears in greenhouse/alerts.py (lines 3 and 9) and in "
        "tests/test_alerts.py (line 5).",
    ),
    Shot(
        "What does greenhouse/care.py contain in terms of code?",
        [
            (
                {"task": "outline", "path": "greenhouse/care.py"},
                _grep(
                    "",
                    [
                        ("greenhouse/care.py", 3, "class Bed:"),
                        ("greenhouse/care.py", 12, "def water_plant(bed, litres):"),
                        ("greenhouse/care.py", 20, "def prune(bed):"),
                    ],
                ),
            )
        ],
        "greenhouse/care.py defines 1 class, Bed (line 3), and 2 functions, water_plant "
        "(line 12) and prune (line 20).",
    ),
    Shot(
        "Count the headings in docs/guide.md and quote its fourth line.",
        [({"task": "read", "path": "docs/guide.md"}, _read("docs/guide.md", GUIDE))],
        'docs/guide.md has 3 headings: "# Growing guide", "## Seedlings" and "## Harvest". '
        'Its fourth line is "Sow in March.".',
    ),
    Shot(
        "Make the watering interval 45 minutes in greenhouse/settings.toml.",
        [
            (
                {"task": "edit", "path": "greenhouse/settings.toml"},
                _read("greenhouse/settings.toml", SETTINGS),
            ),
            (
                {"new_line": "interval = 45", "replaces": "interval = 30"},
                ("edit_file", {"path": "greenhouse/settings.toml"}, '{"replacements": 1}'),
            ),
        ],
        "Done: greenhouse/settings.toml now says interval = 45.",
    ),
    Shot(
        "Give me the gist of plans/spring.md.",
        [
            (
                {"task": "read", "path": "plans/spring.md"},
                (
                    "read_file",
                    {"path": "plans/spring.md"},
                    "error: File not found: plans/spring.md",
                ),
            )
        ],
        "There is no file plans/spring.md in this project, so I cannot summarize it.",
    ),
]

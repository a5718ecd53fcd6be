"""Properties that held when the trust boundaries were attacked (issue 19, item 13), kept as
regression tests: plan mode lets no write through, whatever its spelling, rule or path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from server.permissions import PermissionState, decide
from server.tools.base import ToolContext
from server.tools.files import EditFile, WriteFile
from server.tools.git import Git
from server.tools.hashed import EditFileHashed
from server.tools.shell import Bash, KillBash

WRITE_VECTORS = [
    (WriteFile(), {"path": "a.py", "content": "x"}),
    (WriteFile(), {"path": ".agentls/config.json", "content": "{}"}),
    (WriteFile(), {"path": ".git/config", "content": "[core]"}),
    (WriteFile(), {"path": "../outside.txt", "content": "x"}),
    (WriteFile(), {"path": "link/a.py", "content": "x"}),
    (EditFile(), {"path": "a.py", "old_string": "a", "new_string": "b"}),
    (EditFileHashed(), {"path": "a.py", "anchor_hash": "abc123", "expected_line": "a",
                        "new_line": "b"}),
    (Bash(), {"command": "touch x"}),
    (Bash(), {"command": "echo x > a.py"}),
    (Bash(), {"command": "sleep 1 && touch x", "run_in_background": True}),
    (KillBash(), {"jobId": "bash_1"}),
    (Git(), {"args": ["add", "a.py"]}),
    (Git(), {"args": ["commit", "-m", "x"]}),
    (Git(), {"args": ["branch", "feature"]}),
    (Git(), {"args": ["branch", "-D", "main"]}),
]


@pytest.mark.parametrize(("tool", "args"), WRITE_VECTORS, ids=lambda v: getattr(v, "name", ""))
def test_plan_mode_refuses_every_write_vector_even_with_allow_rules(tmp_path: Path, tool, args):
    ws = tmp_path / "ws"
    ws.mkdir()
    if os.name != "nt":
        (ws / "link").symlink_to(tmp_path)
    state = PermissionState(mode="plan", allow_rules={"write_file", "edit_file", "bash", "git"})
    decision = decide(tool, tool.Input(**args), ToolContext(cwd=ws), state)
    assert decision.action == "deny"

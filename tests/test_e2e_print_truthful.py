"""`agentls -p` tells the truth about what its tools did (issue 57): grep says when it left
matches out and how to get them, and a refused edit is never passed off as done."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply
from tests.agent_client import server_env
from tests.trust_fixture import clone

CLASSES = "".join(f"class C{i}:\n    pass\n" for i in range(41))


def run_print(home: Path, workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", "go", *args],
        capture_output=True,
        text=True,
        cwd=workspace,
        env=server_env(home, OPENAI_API_KEY="k"),
        timeout=60,
    )


def tool_results(fake_llm: FakeModelServer) -> dict[str, str]:
    """Each tool call id -> the result text the model was sent for it."""
    return {
        m["tool_call_id"]: m["content"]
        for r in fake_llm.requests
        for m in r.body.get("messages", [])
        if m["role"] == "tool"
    }


def grep(call_id: str, **args) -> FakeToolCall:
    return FakeToolCall("grep", {"pattern": "^class ", "path": "defs.py", **args}, id=call_id)


def test_grep_says_what_it_left_out_and_gives_the_rest(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    (workspace / "defs.py").write_text(CLASSES)
    fake_llm.script(
        Reply(tool_calls=[grep("first")]),
        Reply(tool_calls=[grep("rest", offset=10, perFile=100)]),
        Reply(text="41 classes"),
    )
    proc = run_print(tmp_path, workspace)
    assert (proc.returncode, proc.stdout) == (0, "41 classes\n"), proc.stderr
    results = tool_results(fake_llm)
    assert json.loads(results["first"]) == {
        "matchCount": 41,
        "filesWithMatches": 1,
        "matches": [
            {"file": "defs.py", "line": 2 * i + 1, "content": f"class C{i}:"} for i in range(10)
        ],
        "truncated": True,
        "truncatedFiles": [{"file": "defs.py", "matchCount": 41, "shown": 10}],
        "more": (
            "10 of 41 matching lines shown (at most 10 per file and 100 in all). For more, call "
            "grep again with offset=10 to skip the lines already shown, or with a larger "
            "perFile (up to 100), or narrow it with path or glob."
        ),
    }
    assert json.loads(results["rest"]) == {
        "matchCount": 41,
        "filesWithMatches": 1,
        "matches": [
            {"file": "defs.py", "line": 2 * i + 1, "content": f"class C{i}:"}
            for i in range(10, 41)
        ],
        "truncated": False,
    }


def edit_version() -> FakeToolCall:
    return FakeToolCall(
        "edit_file", {"path": "six.py", "old_string": "1.17.0", "new_string": "1.17.1"}, id="edit"
    )


def test_a_refused_edit_is_reported_on_stderr_and_the_exit_code(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    (workspace / "six.py").write_text('__version__ = "1.17.0"\n')
    fake_llm.script(Reply(tool_calls=[edit_version()]), Reply(text="Could not edit six.py."))
    proc = run_print(tmp_path, workspace)
    assert (workspace / "six.py").read_text() == '__version__ = "1.17.0"\n'
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.splitlines() == [
        "agentls: refused Edit six.py: the default permission mode asks before edits and -p "
        "has no one to answer; to allow it, run with --permission-mode acceptEdits or "
        "--allowedTools Edit"
    ]


def test_the_answer_after_a_refused_edit_says_it_was_not_done(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    (workspace / "six.py").write_text('__version__ = "1.17.0"\n')
    done = "Done: version in six.py now says 1.17.1."
    fake_llm.script(Reply(tool_calls=[edit_version()]), Reply(text=done))
    proc = run_print(tmp_path, workspace)
    assert proc.stdout == (
        f"{done}\n\nNot done: edit_file six.py was refused (Not allowed: this call needs the "
        "user's approval and no one can answer.)\n"
    )


def test_the_answer_after_a_failed_edit_says_so_unless_a_retry_made_it(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm)
    (workspace / "six.py").write_text('__version__ = "1.17.0"\n')
    wrong = FakeToolCall(
        "edit_file", {"path": "six.py", "old_string": "1.16.0", "new_string": "1.17.1"}, id="bad"
    )
    fake_llm.script(Reply(tool_calls=[wrong]), Reply(text="Done."))
    failed = run_print(tmp_path, workspace, "--permission-mode", "acceptEdits")
    assert failed.stdout == (
        f"Done.\n\nNot done: edit_file six.py failed (old_string was not found in "
        f"{workspace / 'six.py'}.)\n"
    )
    fake_llm.script(
        Reply(tool_calls=[wrong]), Reply(tool_calls=[edit_version()]), Reply(text="Done.")
    )
    retried = run_print(tmp_path, workspace, "--permission-mode", "acceptEdits")
    assert retried.stdout == "Done.\n"
    assert (workspace / "six.py").read_text() == '__version__ = "1.17.1"\n'

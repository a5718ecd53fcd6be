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

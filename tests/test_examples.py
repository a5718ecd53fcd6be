"""The scripts in examples/ run as a user runs them (a subprocess that spawns `agentls serve`),
against the scripted model or the loopback fake model, and their output is checked."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import ROOT, server_env

EXAMPLES = ROOT / "examples"


def run_example(
    name: str, *args: str, env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=90,
    )


def in_order(expected: list[str], lines: list[str]) -> bool:
    """Whether `expected` occur among `lines` in this order (other lines may come between)."""
    rest = iter(lines)
    return all(any(line == want for line in rest) for want in expected)


def scripted_env(tmp_path: Path, replies: list[dict]) -> dict[str, str]:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    return server_env(tmp_path, AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script))


def test_ask_answers_from_the_repository(tmp_path, workspace):
    (workspace / "README.md").write_text("# Greeter\nIt greets people.\n")
    replies = [
        {"toolCalls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
        {"text": "It is a greeter: it greets people."},
    ]
    env = scripted_env(tmp_path, replies)
    out = run_example("ask.py", "--cwd", str(workspace), "What does this project do?", env=env)
    assert (out.returncode, out.stdout) == (0, "It is a greeter: it greets people.\n"), out.stderr
    assert "[tool] Read README.md" in out.stderr


def test_ask_reports_a_refused_session(tmp_path, workspace):
    env = server_env(tmp_path)  # no API key anywhere
    out = run_example("ask.py", "--cwd", str(workspace), "--provider", "anthropic", "hi", env=env)
    assert out.returncode == 2 and out.stdout == ""
    assert "ANTHROPIC_API_KEY" in out.stderr and "-31004" in out.stderr


def test_batch_runs_sessions_in_parallel_and_prints_json(tmp_path, fake_llm):
    names = ["alpha", "beta", "gamma"]
    dirs = []
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(f"{name.title()} greets people.\n")
        dirs.append(tmp_path / name)
    all_started = threading.Barrier(len(names), timeout=120)

    def reply(body: dict) -> Reply:
        tool_output = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if tool_output:
            first_line = re.search(r'1: ([^"\\\n]+)', tool_output[0]).group(1)
            return Reply(text=f"Summary: {first_line}")
        all_started.wait()  # holds every first model call until all sessions have made theirs
        return Reply(tool_calls=[FakeToolCall("read_file", {"path": "README.md"})])

    fake_llm.script(*[reply] * (2 * len(names)))
    env = server_env(
        tmp_path,
        AGENTLS_PROVIDER="openai",
        AGENTLS_MODEL="gpt-5.5",
        AGENTLS_BASE_URL=fake_llm.openai_base_url,
        AGENTLS_MAX_RETRIES="0",
        OPENAI_API_KEY="test-key",
    )
    missing = tmp_path / "missing"
    args = ["--prompt", "Summarize this project.", "--jobs", "3", *map(str, [*dirs, missing])]
    out = run_example("batch.py", *args, env=env)
    assert out.returncode == 1, out.stderr  # the missing directory
    results = json.loads(out.stdout)
    usage = {"inputTokens": 20, "outputTokens": 10, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    assert results[:3] == [
        {
            "cwd": str(d.resolve()),
            "sessionId": r["sessionId"],
            "turnId": r["turnId"],
            "terminal": "completed",
            "stopReason": "end_turn",
            "answer": f"Summary: {name.title()} greets people.",
            "toolCalls": ["read_file"],
            "usage": usage,
            "error": None,
        }
        for d, name, r in zip(dirs, names, results, strict=False)
    ]
    assert len({r["sessionId"] for r in results[:3]}) == 3
    assert results[3]["cwd"] == str(missing) and "-32602" in results[3]["error"]
    assert set(results[3]) == {"cwd", "error"}


CHAT_SCRIPT = [
    {
        "thinking": "The user wants a file.",
        "toolCalls": [
            {
                "name": "ask_user_question",
                "arguments": {"question": "Which greeting?", "options": ["hello", "hi"]},
            }
        ],
    },
    {
        "toolCalls": [
            {
                "name": "todo_write",
                "arguments": {
                    "todos": [{"id": "1", "content": "Write greeting.txt", "status": "in_progress"}]
                },
            },
            {"name": "write_file", "arguments": {"path": "greeting.txt", "content": "hello\n"}},
        ]
    },
    {"text": "Wrote greeting.txt."},
    {"toolCalls": [{"name": "bash", "arguments": {"command": "rm greeting.txt"}}]},
    {"text": "Kept it."},
]


def test_chat_renders_tools_and_answers_questions_and_permissions_from_stdin(tmp_path, workspace):
    env = scripted_env(tmp_path, CHAT_SCRIPT)
    answers = "write a greeting file\n1\n1\nnow delete it\n3\n"
    out = run_example("chat.py", "--cwd", str(workspace), env=env, stdin=answers)
    assert out.returncode == 0, out.stderr
    assert (workspace / "greeting.txt").read_text() == "hello\n"  # allowed, then not deleted
    expected = [
        "you> write a greeting file",
        "thinking: The user wants a file.",
        "[tool] Ask: Which greeting?",
        "[question] Which greeting?",
        "  1) hello",
        "  2) hi",
        "answer (a number, or your own words; empty declines): 1",
        "[completed] Ask: Which greeting?",
        "[plan]",
        "  [~] Write greeting.txt",
        "[permission] Write greeting.txt (write_file)",
        "  1) Allow once  2) Always allow  3) Reject  4) Always reject",
        "choice [1-4, empty rejects]: 1",
        "[completed] Write greeting.txt",
        "Wrote greeting.txt.",
        "[completed]",
        "you> now delete it",
        "[permission] Run `rm greeting.txt` (bash)",
        "choice [1-4, empty rejects]: 3",
        "Kept it.",
        "[completed]",
        "you> ",
    ]
    lines = out.stdout.splitlines()
    assert in_order(expected, lines), out.stdout
    denied = [line for line in lines if line.startswith("[denied] Run `rm greeting.txt`")]
    assert len(denied) == 1, out.stdout


async def read_until(stream: asyncio.StreamReader, marker: bytes, seen: bytearray) -> None:
    async def scan() -> None:
        while marker not in seen:
            chunk = await stream.read(4096)
            assert chunk, f"output ended before {marker!r}: {bytes(seen)!r}"
            seen.extend(chunk)

    await asyncio.wait_for(scan(), 30)


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C ends the program on Windows")
async def test_chat_ctrl_c_cancels_the_turn_and_the_chat_goes_on(tmp_path, workspace):
    replies = [{"text": " ".join(["word"] * 50), "delay": 0.2}, {"text": "Still here."}]
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, str(EXAMPLES / "chat.py"), "--cwd", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=scripted_env(tmp_path, replies),
        cwd=ROOT,
        start_new_session=True,  # a process group of its own, as a terminal would make it
    )
    seen = bytearray()
    try:
        proc.stdin.write(b"talk\n")
        await read_until(proc.stdout, b"word word", seen)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
        await read_until(proc.stdout, b"[aborted]", seen)
        proc.stdin.write(b"again\n/quit\n")
        proc.stdin.close()
        seen.extend(await asyncio.wait_for(proc.stdout.read(), 30))
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    lines = seen.decode().splitlines()
    assert in_order(["you> talk", "[aborted]", "you> again", "Still here.", "[completed]"], lines)

"""stream-json flags that change what the agent does, checked on what the model received."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import server_env
from tests.conftest import write_project_config


def run(tmp_path, workspace, fake_llm, *args, lines=None, stdin=None):
    write_project_config(
        workspace,
        {
            "llm": {
                "provider": "openai",
                "model": "gpt-5.5",
                "baseUrl": fake_llm.openai_base_url,
                "maxRetries": 0,
            }
        },
    )
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    cmd = [sys.executable, "-m", "server.cli", "--output-format", "stream-json", "--verbose", *args]
    if lines is not None:
        cmd += ["--input-format", "stream-json"]
        stdin = "".join(json.dumps(x) + "\n" for x in lines)
    proc = subprocess.run(
        cmd, input=(stdin or "").encode(), capture_output=True, cwd=workspace, env=env, timeout=60
    )
    return [json.loads(line) for line in proc.stdout.decode().splitlines()], proc


def notes_in(contents: list[str]) -> list[str]:
    """The warnings of `system/informational` frames (one frame lists several as `- ` lines)."""
    found = []
    for content in contents:
        lines = content.split("\n")
        found += [line[2:] for line in lines[1:]] if len(lines) > 1 else lines
    return found


def user(text):
    return {"type": "user", "message": {"role": "user", "content": text}}


def test_system_prompt_flags(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="a"), Reply(text="b"))
    run(
        tmp_path,
        workspace,
        fake_llm,
        "-p",
        "hi",
        "--system-prompt",
        "You are terse.",
        "--append-system-prompt",
        "Answer in French.",
    )
    run(
        tmp_path,
        workspace,
        fake_llm,
        "-p",
        "hi",
        "--system-prompt",
        "",
        "--append-system-prompt",
        "Answer in French.",
    )
    first, second = (r.body["messages"][0] for r in fake_llm.requests)
    assert first == {"role": "system", "content": "You are terse.\nAnswer in French."}
    assert second["content"].startswith("You are agentls")
    assert second["content"].endswith("\nAnswer in French.")


def test_allowed_and_disallowed_tools(tmp_path, workspace, fake_llm):
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(text="done"),
    )
    frames, _ = run(
        tmp_path,
        workspace,
        fake_llm,
        "-p",
        "write",
        "--allowedTools",
        "Write,Read",
        "--disallowedTools",
        "Bash",
        "WebFetch",
    )
    assert (workspace / "a.txt").read_text() == "x"
    tools = {t["function"]["name"] for t in fake_llm.requests[0].body["tools"]}
    assert "write_file" in tools and "bash" not in tools and "web_fetch" not in tools
    assert "Bash" not in frames[0]["tools"]


def test_max_turns_ends_with_error_max_turns(tmp_path, workspace, fake_llm):
    fake_llm.script(*[Reply(tool_calls=[FakeToolCall("list_dir", {})]) for _ in range(3)])
    frames, proc = run(tmp_path, workspace, fake_llm, "-p", "loop", "--max-turns", "2")
    result = frames[-1]
    assert (result["subtype"], result["is_error"], result["num_turns"]) == (
        "error_max_turns",
        True,
        2,
    )
    assert proc.returncode == 1


def test_a_user_message_during_a_turn_is_steered_in(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text=" ".join(["working"] * 8), chunk_delay=0.5), Reply(text="noted"))
    write_project_config(
        workspace,
        {"llm": {"provider": "openai", "model": "gpt-5.5", "baseUrl": fake_llm.openai_base_url}},
    )
    env = server_env(tmp_path, OPENAI_API_KEY="k")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=workspace,
        env=env,
    )
    proc.stdin.write((json.dumps(user("start")) + "\n").encode())
    proc.stdin.flush()
    for line in proc.stdout:
        if json.loads(line)["type"] == "system":
            break
    deadline = time.monotonic() + 60
    while not fake_llm.delta_times:  # the turn's model call is streaming
        assert time.monotonic() < deadline, "the first model call never started"
        time.sleep(0.01)
    proc.stdin.write((json.dumps(user("also use tabs")) + "\n").encode())
    proc.stdin.close()
    frames = [json.loads(line) for line in proc.stdout]
    proc.wait(timeout=30)
    results = [f for f in frames if f["type"] == "result"]
    assert len(results) == 1 and results[0]["result"] == "noted"
    second = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "user"]
    assert "also use tabs" in second


def test_system_prompt_file_and_refused_flags_are_said(tmp_path, workspace, fake_llm):
    (workspace / "prompt.md").write_text("You review code.")
    fake_llm.script(Reply(text="a"))
    frames, proc = run(
        tmp_path,
        workspace,
        fake_llm,
        "--system-prompt-file",
        "prompt.md",
        "--fallback-model",
        "m2",
        "--no-such-flag",
        lines=[user("hi")],
    )
    assert proc.returncode == 0
    assert fake_llm.requests[0].body["messages"][0]["content"] == "You review code."
    said = notes_in([f["content"] for f in frames if f.get("subtype") == "informational"])
    assert said == [
        "--fallback-model is not supported: a failing model fails the turn",
        "agentls does not know --no-such-flag: ignored",
    ]


def test_thinking_tokens_flag_and_control_request(tmp_path, workspace, fake_llm):
    from tests.agent_client import use_fake_model

    fake_llm.script(Reply(text="a"), Reply(text="b"))
    use_fake_model(workspace, fake_llm, "anthropic")
    env = server_env(tmp_path, ANTHROPIC_API_KEY="k")
    base = [sys.executable, "-m", "server.cli", "--output-format", "stream-json", "--verbose"]
    base += ["--input-format", "stream-json", "--max-thinking-tokens", "4096"]
    off = {"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 0}
    for lines in (
        [user("think")],
        [{"type": "control_request", "request_id": "t", "request": off}, user("do not")],
    ):
        stdin = "".join(json.dumps(x) + "\n" for x in lines).encode()
        proc = subprocess.run(
            base, input=stdin, capture_output=True, cwd=workspace, env=env, timeout=60
        )
        assert proc.returncode == 0, proc.stderr.decode()
    first, second = (r.body for r in fake_llm.requests)
    assert "thinking" in first and "thinking" not in second


def test_effort_is_a_thinking_level(tmp_path, workspace, fake_llm):
    from tests.agent_client import use_fake_model

    fake_llm.script(Reply(text="a"))
    use_fake_model(workspace, fake_llm, "anthropic")
    env = server_env(tmp_path, ANTHROPIC_API_KEY="k")
    cmd = [sys.executable, "-m", "server.cli", "-p", "hi", "--effort", "high"]
    proc = subprocess.run(cmd, capture_output=True, cwd=workspace, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    body = fake_llm.requests[0].body
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "high"}

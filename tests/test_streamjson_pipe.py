"""stream-json over a raw pipe: real process, real stdin/stdout, golden NDJSON transcripts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_client import server_env

GOLDEN = Path(__file__).parents[1] / "protocol" / "fixtures" / "streamjson"
UPDATE = os.environ.get("AGENTLS_UPDATE_GOLDEN") == "1"
VOLATILE = {"uuid", "session_id", "duration_ms", "duration_api_ms", "pid", "cwd", "tools"}


def run(tmp_path, workspace, lines, *args, script=None, timeout=30, env=None):
    env = server_env(tmp_path, **{"AGENTLS_PROVIDER": "scripted", **(env or {})})
    if script is not None:
        path = tmp_path / "script.json"
        path.write_text(json.dumps(script))
        env["AGENTLS_SCRIPT"] = str(path)
    data = (
        lines
        if isinstance(lines, bytes)
        else "".join(
            (json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in lines
        ).encode()
    )
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        input=data,
        capture_output=True,
        cwd=workspace,
        env=env,
        timeout=timeout,
    )


def stream(*extra):
    return [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        *extra,
    ]


def frames(proc) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def normalize(value, cwd: str = "<cwd>"):
    if isinstance(value, dict):
        return {
            k: ("<" + k + ">" if k in VOLATILE else normalize(v, cwd)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalize(v, cwd) for v in value]
    if isinstance(value, str):
        return re.sub(r"msg_[0-9a-f]{24}", "msg_<id>", value).replace(cwd, "<cwd>")
    return value


def check_golden(name: str, got: list[dict], workspace: Path) -> None:
    path = GOLDEN / f"{name}.ndjson"
    text = "".join(json.dumps(normalize(f, str(workspace)), sort_keys=True) + "\n" for f in got)
    if UPDATE:
        path.write_text(text)
    assert path.read_text() == text, f"transcript changed; AGENTLS_UPDATE_GOLDEN=1 rewrites {path}"


def user(text):
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "",
    }


def test_raw_pipe_says_hi(tmp_path, workspace):
    proc = run(tmp_path, workspace, [user("hi")], *stream())
    assert proc.returncode == 0, proc.stderr
    got = frames(proc)
    assert [(f["type"], f.get("subtype")) for f in got] == [
        ("system", "init"),
        ("assistant", None),
        ("result", "success"),
    ]
    check_golden("say_hi", got, workspace)


def test_tool_turn_transcript(tmp_path, workspace):
    (workspace / "notes.txt").write_text("hello\n")
    script = [
        {"toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "It says hello."},
    ]
    proc = run(tmp_path, workspace, [user("read it")], *stream(), script=script)
    assert proc.returncode == 0, proc.stderr
    check_golden("read_tool", frames(proc), workspace)


def test_partial_messages_transcript(tmp_path, workspace):
    (workspace / "notes.txt").write_text("hello\n")
    script = [
        {
            "thinking": "Look first.",
            "toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
        },
        {"text": "It says hello."},
    ]
    proc = run(
        tmp_path, workspace, [user("read it")], *stream("--include-partial-messages"), script=script
    )
    assert proc.returncode == 0, proc.stderr
    got = frames(proc)
    events = [f["event"]["type"] for f in got if f["type"] == "stream_event"]
    assert events.count("message_start") == events.count("message_stop") == 2
    check_golden("partial_messages", got, workspace)


def test_a_subagents_calls_come_under_the_task_tool_use(tmp_path, workspace):
    (workspace / "notes.txt").write_text("hello\n")
    task = {"subagent_type": "explorer", "description": "read notes", "prompt": "Read notes.txt"}
    script = [
        {"toolCalls": [{"name": "task", "arguments": task}]},
        {"toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "notes.txt says hello."},
        {"text": "The notes say hello."},
    ]
    proc = run(tmp_path, workspace, [user("what do the notes say?")], *stream(), script=script)
    assert proc.returncode == 0, proc.stderr
    got = frames(proc)
    tool_uses = [
        (f["parent_tool_use_id"], block["id"], block["name"])
        for f in got
        if f["type"] == "assistant"
        for block in f["message"]["content"]
        if block["type"] == "tool_use"
    ]
    [(none, task_id, task_name), (parent, read_id, read_name)] = tool_uses
    assert (none, task_name, read_name) == (None, "Task", "Read")
    assert parent == task_id and read_id.startswith(f"{task_id}/")
    results = [
        (f["parent_tool_use_id"], f["message"]["content"][0]["tool_use_id"])
        for f in got
        if f["type"] == "user"
    ]
    assert results == [(task_id, read_id), (None, task_id)]
    check_golden("subagent_tool", got, workspace)


def test_control_protocol_transcript(tmp_path, workspace):
    lines = [
        {
            "type": "control_request",
            "request_id": "r0",
            "request": {"subtype": "initialize", "hooks": None},
        },
        {"type": "control_request", "request_id": "r1", "request": {"subtype": "bogus"}},
        {
            "type": "control_request",
            "request_id": "r2",
            "request": {"subtype": "set_permission_mode", "mode": "plan"},
        },
        {"type": "control_request", "request_id": "r3", "request": {"subtype": "mcp_status"}},
        {"type": "control_request", "request_id": "r4", "request": {"subtype": "interrupt"}},
        user("hi"),
    ]
    proc = run(tmp_path, workspace, lines, *stream())
    got = frames(proc)
    assert got[1] == {
        "type": "control_response",
        "response": {
            "subtype": "error",
            "request_id": "r1",
            "error": "Unsupported control request subtype: bogus",
            "error_code": "unsupported_request",
        },
    }
    assert got[4]["response"]["response"] == {"still_queued": []}
    assert got[5]["permissionMode"] == "plan"
    check_golden("control", got, workspace)


def test_replay_user_messages_echoes_each_with_its_uuid(tmp_path, workspace):
    lines = [{**user("hi"), "uuid": "11111111-2222-3333-4444-555555555555"}, user("again")]
    proc = run(tmp_path, workspace, lines, *stream("--replay-user-messages"))
    echoes = [f for f in frames(proc) if f["type"] == "user"]
    assert [(e["message"], e["isReplay"], e["parent_tool_use_id"]) for e in echoes] == [
        ({"role": "user", "content": "hi"}, True, None),
        ({"role": "user", "content": "again"}, True, None),
    ]
    assert echoes[0]["uuid"] == "11111111-2222-3333-4444-555555555555" and echoes[1]["uuid"]
    kinds = [(f["type"], f.get("subtype")) for f in frames(proc)]
    assert kinds[:3] == [("system", "init"), ("user", None), ("assistant", None)]


def test_bad_lines_blank_lines_and_split_multibyte(tmp_path, workspace):
    good = json.dumps(user("héllo ✓ 世界"), ensure_ascii=False).encode()
    data = b"\n\n{not json\n[1,2]\n" + good + b"\n   \n"
    proc = run(tmp_path, workspace, data, *stream())
    assert proc.returncode == 0
    got = frames(proc)
    assert [f["subtype"] for f in got[:2]] == ["error", "error"]
    assert "stdin line 3" in got[0]["error"] and "stdin line 4" in got[1]["error"]
    assert got[-1]["result"] == "You said: héllo ✓ 世界"


def test_a_line_over_16_mb_is_skipped_not_fatal(tmp_path, workspace):
    huge = json.dumps(user("x" * (17 * 1024 * 1024))).encode()
    data = huge + b"\n" + json.dumps(user("small")).encode() + b"\n"
    proc = run(tmp_path, workspace, data, *stream(), timeout=60)
    got = frames(proc)
    assert got[0]["subtype"] == "error" and "longer than" in got[0]["error"]
    assert got[-1]["result"] == "You said: small"
    big_ok = json.dumps(user("y" * (1024 * 1024))).encode() + b"\n"
    assert frames(run(tmp_path, workspace, big_ok, *stream()))[-1]["subtype"] == "success"


@pytest.mark.parametrize(("fmt", "expected"), [("text", "You said: hey\n")])
def test_print_text(tmp_path, workspace, fmt, expected):
    proc = run(tmp_path, workspace, b"", "-p", "hey", "--output-format", fmt)
    assert (proc.returncode, proc.stdout.decode()) == (0, expected)


def test_print_json_and_failed_turn_exit_code(tmp_path, workspace):
    ok = run(tmp_path, workspace, b"", "-p", "hey", "--output-format", "json")
    assert json.loads(ok.stdout)["result"] == "You said: hey"
    failed = run(
        tmp_path,
        workspace,
        b"",
        "-p",
        "hey",
        "--output-format",
        "json",
        script=[{"error": "model exploded"}],
    )
    assert failed.returncode == 1
    result = json.loads(failed.stdout)
    assert (result["subtype"], result["is_error"]) == ("error_during_execution", True)
    assert "model exploded" in result["errors"][0]


def test_stream_json_output_needs_verbose(tmp_path, workspace):
    proc = run(tmp_path, workspace, b"", "-p", "hi", "--output-format", "stream-json")
    assert proc.returncode == 1 and b"requires --verbose" in proc.stderr


def test_unknown_flags_are_ignored(tmp_path, workspace):
    proc = run(
        tmp_path,
        workspace,
        [user("hi")],
        *stream("--tools", "default", "--setting-sources=user", "--brand-new-flag", "value"),
    )
    assert proc.returncode == 0
    assert frames(proc)[-1]["result"] == "You said: hi"
    assert b"ignoring unknown arguments" in proc.stderr


def test_sdk_options_transcript(tmp_path, workspace):
    from tests.test_streamjson_flags import notes_in

    """Warnings for what is not done, and a structured output that never satisfies its schema:
    frames the SDKs' types must accept (the golden file is type-checked)."""
    initialize = {
        "subtype": "initialize",
        "jsonSchema": {"type": "object"},
        "promptSuggestions": True,
        "someFutureField": 1,
    }
    lines = [{"type": "control_request", "request_id": "i", "request": initialize}, user("hi")]
    proc = run(tmp_path, workspace, lines, *stream("--permission-mode", "auto"))
    got = frames(proc)
    notes = notes_in([f["content"] for f in got if f.get("subtype") == "informational"])
    assert notes == [
        "Permission mode 'auto' (a classifier approves calls) is not available in agentls: "
        "running in 'default', which asks before edits, commands and fetches.",
        "prompt suggestions are not supported: none are sent",
        "agentls does not know the initialize field 'someFutureField': ignored",
    ]
    assert got[-1]["subtype"] == "error_max_structured_output_retries"
    check_golden("sdk_options", got, workspace)

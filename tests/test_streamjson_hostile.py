"""Hostile stdin lines never stop `agentls -p --input-format stream-json`: each bad line is
one `system/error` frame and the next good line is served. Real process, real pipes."""

from __future__ import annotations

import json

import pytest

from tests.test_streamjson_pipe import frames, run, stream, user

DEEP = 100_000

HOSTILE_LINES = {
    "message is a string": {"type": "user", "message": "hi"},
    "text block whose text is a number": {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": 5}]},
    },
    "image block with a numeric data": {
        "type": "user",
        "message": {"content": [{"type": "image", "source": {"type": "base64", "data": 5}}]},
    },
    "control_request whose request is a string": {
        "type": "control_request",
        "request_id": "r1",
        "request": "initialize",
    },
    "control_request whose subtype is a list": {
        "type": "control_request",
        "request_id": "r2",
        "request": {"subtype": ["interrupt"]},
    },
    "set_permission_mode with a number": {
        "type": "control_request",
        "request_id": "r3",
        "request": {"subtype": "set_permission_mode", "mode": 7},
    },
    "control_response whose response is a string": {
        "type": "control_response",
        "response": "ok",
    },
}

HANDLED_LINES = {
    "message content is a number": {"type": "user", "message": {"content": 5}},
    "a block that is a list": {"type": "user", "message": {"content": [[{"type": "text"}]]}},
    "type is a number": {"type": 5},
}


def check_served(proc, bad_lines: int) -> None:
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    got = frames(proc)
    errors = [f for f in got if f["type"] == "system" and f["subtype"] == "error"]
    assert len(errors) == bad_lines, got
    assert got[-1]["type"] == "result" and got[-1]["result"] == "You said: small"


@pytest.mark.parametrize("line", list(HOSTILE_LINES.values()), ids=list(HOSTILE_LINES))
def test_a_wrongly_typed_line_is_an_error_frame(tmp_path, workspace, line):
    data = json.dumps(line).encode() + b"\n" + json.dumps(user("small")).encode() + b"\n"
    check_served(run(tmp_path, workspace, data, *stream()), 1)


@pytest.mark.parametrize("line", list(HANDLED_LINES.values()), ids=list(HANDLED_LINES))
def test_lines_that_were_already_refused(tmp_path, workspace, line):
    data = json.dumps(line).encode() + b"\n" + json.dumps(user("small")).encode() + b"\n"
    check_served(run(tmp_path, workspace, data, *stream()), 1)


@pytest.mark.parametrize(
    "line",
    [
        b"[" * DEEP + b"]" * DEEP,
        b'{"type": "user", "message": {"content": ' + b"[" * DEEP + b"]" * DEEP + b"}}",
        b'{"type": "user", "message": {"content": [{"type": "text", "text": "hi", "x": '
        + b'{"a": ' * 300
        + b"1"
        + b"}" * 300
        + b"}]}}",
    ],
    ids=["deep array", "deep content", "deep extra field"],
)
def test_deep_nesting_is_an_error_frame(tmp_path, workspace, line):
    data = line + b"\n" + json.dumps(user("small")).encode() + b"\n"
    check_served(run(tmp_path, workspace, data, *stream()), 1)

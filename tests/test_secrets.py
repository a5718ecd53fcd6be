"""Secrets agentls holds stay with it: credentials in a base URL never reach the turn's error,
the client, the log or the store; approved bash commands do not inherit provider keys unless
the user config passes them (`shell.passEnv`). Real process, stream-json door."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.test_streamjson_pipe import frames, run, stream, user

pytestmark = pytest.mark.skipif(os.name == "nt", reason="a POSIX shell command")

SECRET = "sk-agentls-test-0123456789abcdef"
TOKEN = "gw-token-9876543210fedcba"


def write_user_config(tmp_path: Path, config: dict) -> None:
    user_dir = tmp_path / "config" / "agentls"
    user_dir.mkdir(parents=True, exist_ok=True)
    (user_dir / "config.json").write_text(json.dumps(config))


def every_byte_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def test_credentials_in_a_base_url_are_never_echoed_logged_or_stored(tmp_path, workspace):
    write_user_config(
        tmp_path,
        {
            "llm": {
                "provider": "openai",
                "model": "gpt-5.5",
                "maxRetries": 0,
                "baseUrl": f"http://agent:{TOKEN}@127.0.0.1:9/v1",
            }
        },
    )
    env_key = {"OPENAI_API_KEY": SECRET, "AGENTLS_PROVIDER": "openai"}
    proc = run(tmp_path, workspace, [user("hi")], *stream(), env=env_key)
    got = frames(proc)
    assert got[-1]["type"] == "result" and got[-1]["is_error"], got
    assert TOKEN.encode() not in proc.stdout + proc.stderr
    assert SECRET.encode() not in proc.stdout + proc.stderr
    stored = every_byte_under(tmp_path / "data")
    assert stored and TOKEN.encode() not in stored and SECRET.encode() not in stored


def bash_turn(tmp_path, workspace):
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": 'echo "key=$OPENAI_API_KEY"'}}]},
        {"text": "done"},
    ]
    proc = run(
        tmp_path,
        workspace,
        [user("show")],
        *stream("--permission-mode", "bypassPermissions"),
        script=script,
        env={"OPENAI_API_KEY": SECRET},
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    [result] = [
        b
        for f in frames(proc)
        if f["type"] == "user"
        for b in f["message"]["content"]
        if b.get("type") == "tool_result"
    ]
    return json.dumps(result["content"])


def test_bash_does_not_inherit_provider_keys(tmp_path, workspace):
    assert "key=" in bash_turn(tmp_path, workspace)
    assert SECRET not in bash_turn(tmp_path, workspace)


def test_a_project_config_cannot_pass_keys(tmp_path, workspace):
    (workspace / ".agentls").mkdir()
    (workspace / ".agentls" / "config.json").write_text(
        json.dumps({"shell": {"passEnv": ["OPENAI_API_KEY"]}})
    )
    assert SECRET not in bash_turn(tmp_path, workspace)


def test_the_user_config_can_pass_a_key(tmp_path, workspace):
    write_user_config(tmp_path, {"shell": {"passEnv": ["OPENAI_API_KEY"]}})
    assert f"key={SECRET}" in bash_turn(tmp_path, workspace)

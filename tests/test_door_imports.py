"""The ACP and stream-json doors start without the language-server stack (pygls and lsprotocol
cost a few hundred milliseconds of a cold start) and without any provider SDK: the SDK of the
provider in use is imported when a session needs it, never another one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pygls", "lsprotocol", "anthropic", "openai", "llama_cpp")


@pytest.mark.parametrize(
    "door", ["server.frontends.streamjson", "server.frontends.acp", "server.frontends.print_door"]
)
def test_a_door_imports_no_language_server_stack_and_no_sdk(door):
    code = (
        f"import sys, json, {door}\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []

"""Runs the pinned third-party TypeScript clients in tests/clients (installed by scripts/setup-clients)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CLIENTS = Path(__file__).resolve().parent / "clients"
NODE_MODULES = CLIENTS / "node_modules"
NODE = shutil.which("node")


def require_clients() -> None:
    """Skips outside scripts/test when the clients are not installed; under CI a missing install fails."""
    if NODE and (NODE_MODULES / ".agentls-lock").exists():
        return
    reason = "the TypeScript test clients are not installed: run scripts/setup-clients"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


AGENTLS = shutil.which("agentls", path=str(Path(sys.executable).parent))
"""The agentls command of this venv: what a client runs as its Claude Code executable."""


def run_script(script: str, plan: dict[str, Any], *, timeout: float) -> list[dict[str, Any]]:
    """Run tests/clients/`script` with `plan` as its argument; the JSON lines it printed, the
    last of which is `done`."""
    proc = subprocess.run(
        [NODE, str(CLIENTS / script), json.dumps(plan)],
        capture_output=True,
        cwd=CLIENTS,
        timeout=timeout,
    )
    events = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert events and events[-1]["event"] == "done", (events[-3:], proc.stderr.decode()[-3000:])
    return events

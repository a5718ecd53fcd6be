"""Runs the pinned third-party TypeScript clients in tests/clients (installed by scripts/setup-clients)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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

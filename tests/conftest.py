from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeModelServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def fake_llm():
    with FakeModelServer() as server:
        yield server


def write_project_config(ws: Path, config: dict) -> None:
    (ws / ".agentls").mkdir(exist_ok=True)
    (ws / ".agentls" / "config.json").write_text(json.dumps(config))

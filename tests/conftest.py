from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeModelServer


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("SKIP_LOCAL_MODEL") != "1":
        return
    skip = pytest.mark.skip(reason="SKIP_LOCAL_MODEL=1: the real local model is not run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


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
    """Write `config` for the workspace; `llm.baseUrl`, which only the user config may set,
    goes to the user config of the test home (`server_env(ws.parent)`)."""
    config = json.loads(json.dumps(config))
    base_url = config.get("llm", {}).pop("baseUrl", None)
    (ws / ".agentls").mkdir(exist_ok=True)
    (ws / ".agentls" / "config.json").write_text(json.dumps(config))
    if base_url:
        user = ws.parent / "config" / "agentls"
        user.mkdir(parents=True, exist_ok=True)
        (user / "config.json").write_text(json.dumps({"llm": {"baseUrl": base_url}}))

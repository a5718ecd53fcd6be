from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from server.testing.fake_llm import FakeModelServer

# The suite's tests judge the permission policy as it is without a sandbox (machines without
# bubblewrap run that way); the sandbox tests (tests/test_sandbox*.py) ask for one themselves.
os.environ.setdefault("AGENTLS_SANDBOX", "off")
# In-process sessions keep their data (file checkpoints, logs) under a data dir of the run's
# own, never the user's; spawned servers get a home of their test (`server_env`).
os.environ.setdefault("AGENTLS_HOME", tempfile.mkdtemp(prefix="agentls-tests-"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The real local model's tests take minutes each: they go first, so that in worker
    # processes (`-n`) they start at once instead of ending the run alone.
    items.sort(key=lambda item: "slow" not in item.keywords)
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


# -- the provider adapter tests ----------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    """The fake model, under the name the provider adapter tests give it."""
    with FakeModelServer() as fake:
        yield fake


_OPENED: list = []


def opened(provider):
    """A provider a test made, to be closed by `close_providers` when the test ends."""
    _OPENED.append(provider)
    return provider


@pytest.fixture
async def close_providers() -> AsyncIterator[None]:
    yield
    while _OPENED:
        await _OPENED.pop().aclose()


def write_project_config(ws: Path, config: dict, *, user: dict | None = None) -> None:
    """Write `config` for the workspace; `llm.baseUrl`, which only the user config may set, and
    `user` (keys an untrusted project cannot set, such as a permission mode) are merged into the
    user config of the test home (`server_env(ws.parent)`)."""
    config = json.loads(json.dumps(config))
    base_url = config.get("llm", {}).pop("baseUrl", None)
    (ws / ".agentls").mkdir(exist_ok=True)
    (ws / ".agentls" / "config.json").write_text(json.dumps(config))
    user_config = json.loads(json.dumps(user or {}))
    if base_url:
        user_config.setdefault("llm", {})["baseUrl"] = base_url
    if user_config:
        path = ws.parent / "config" / "agentls" / "config.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        merged = json.loads(path.read_text()) if path.exists() else {}
        for key, value in user_config.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        path.write_text(json.dumps(merged))

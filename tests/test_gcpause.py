"""The collector is off during start-up and back on, with start-up's objects frozen, once the
provider is ready (or after the longest pause)."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import pytest

from server import gcpause
from server.providers.base import ProviderSettings
from server.providers.registry import create_provider


@pytest.fixture(autouse=True)
def collector_restored():
    yield
    gcpause.resume()
    gc.unfreeze()
    gc.enable()


def test_pause_then_resume_freezes_what_start_up_made():
    gcpause.pause()
    assert not gc.isenabled() and gcpause.paused()
    made = [[] for _ in range(1000)]
    gcpause.resume()
    assert gc.isenabled() and not gcpause.paused()
    assert gc.get_freeze_count() >= len(made)
    gcpause.resume()  # a second resume changes nothing
    assert gc.isenabled()


def test_a_collector_the_host_turned_off_stays_off():
    gc.disable()
    gcpause.pause()
    gcpause.resume()
    assert not gc.isenabled()


def test_creating_the_provider_ends_the_pause():
    gcpause.pause()
    create_provider(ProviderSettings(provider="anthropic", model="claude-sonnet-4-6", api_key="k"))
    assert gc.isenabled()


def test_the_longest_pause_ends_by_itself(monkeypatch):
    monkeypatch.setattr(gcpause, "LONGEST_PAUSE_S", 0.01)
    resumed = threading.Event()
    real = gcpause.resume
    monkeypatch.setattr(gcpause, "resume", lambda: (real(), resumed.set()))
    gcpause.pause()
    assert resumed.wait(60)
    assert gc.isenabled()


def test_the_command_line_runs_with_the_collector_back_on_after_start_up(tmp_path):
    """`agentls sessions list` reaches no provider: the collector is back on after the pause."""
    code = (
        "import gc, threading, sys\n"
        "from server import gcpause\n"
        "gcpause.LONGEST_PAUSE_S = 0.01\n"
        "from server.cli import main\n"
        "main(['sessions', 'list'])\n"
        "import time\n"
        "deadline = time.monotonic() + 60\n"
        "while not gc.isenabled() and time.monotonic() < deadline: time.sleep(0.01)\n"
        "print('enabled' if gc.isenabled() else 'disabled')\n"
    )
    env = {"AGENTLS_HOME": str(tmp_path / "data"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "enabled", done.stderr

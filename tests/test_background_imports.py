"""Background imports run on one thread, one at a time, and `ready` waits for a queued one: a
provider SDK and the shell parser imported on two threads at once handed the first model
call a partly initialized SDK (`module 'openai' has no attribute 'AsyncOpenAI'`)."""

from __future__ import annotations

import subprocess
import sys
import threading

from server import background


def test_imports_run_one_at_a_time_and_ready_waits_for_each():
    running, overlap, order = [], [], []
    gate = threading.Event()

    def load(name):
        def run():
            running.append(name)
            overlap.append(len(running))
            if name == "bg-test-first":
                gate.wait(60)
            order.append(name)
            running.remove(name)

        return run

    background.start("bg-test-first", load("bg-test-first"))
    background.start("bg-test-second", load("bg-test-second"))
    background.start("bg-test-first", load("bg-test-first"))  # queued already: not again
    gate.set()
    background.ready("bg-test-second")
    assert order == ["bg-test-first", "bg-test-second"]
    assert overlap == [1, 1]


def test_then_runs_whether_the_import_works_or_not():
    ran = []

    def broken():
        raise ImportError("no such SDK")

    background.start("bg-test-broken", broken, then=lambda: ran.append("broken"))
    background.ready("bg-test-broken")
    assert ran == ["broken"]
    background.start("json", then=lambda: ran.append("json"))  # imported already: at once
    assert ran == ["broken", "json"]
    background.ready("never-queued")  # returns at once


def test_then_of_a_second_start_runs_too():
    ran = []
    gate = threading.Event()
    background.start("bg-test-slow", lambda: gate.wait(60), then=lambda: ran.append("first"))
    background.start("bg-test-slow", then=lambda: ran.append("second"))  # queued already
    gate.set()
    background.ready("bg-test-slow")
    assert sorted(ran) == ["first", "second"]
    background.start("bg-test-slow", then=lambda: ran.append("third"))  # not a module: again
    background.ready("bg-test-slow")
    assert sorted(ran) == ["first", "second", "third"]


def test_an_import_that_raises_systemexit_leaves_the_thread_working():
    script = """
from server import background
later = []
def exits():
    raise SystemExit(3)
background.start("bg-test-exits", exits)
background.start("bg-test-after-exit", lambda: later.append("ran"))
background.ready("bg-test-after-exit", timeout=20)
print(later)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "['ran']", done.stderr


def test_ready_says_when_it_stops_waiting(caplog):
    gate = threading.Event()
    background.start("bg-test-stuck", lambda: gate.wait(60))
    try:
        with caplog.at_level("WARNING", logger="server.background"):
            background.ready("bg-test-stuck", timeout=0.05)
        assert "bg-test-stuck" in caplog.text
    finally:
        gate.set()
        background.ready("bg-test-stuck")


def test_ready_waits_for_the_imports_queued_up_to_the_name_only(caplog):
    order = []
    first, later = threading.Event(), threading.Event()
    background.start("bg-test-before", lambda: (first.wait(60), order.append("before")))
    background.start("bg-test-named", lambda: order.append("named"))
    background.start("bg-test-queued-after", lambda: (later.wait(60), order.append("after")))
    first.set()
    try:
        with caplog.at_level("WARNING", logger="server.background"):
            background.ready("bg-test-named", timeout=10)  # while the one after still waits
        assert order == ["before", "named"]
        assert "stopped waiting" not in caplog.text
    finally:
        later.set()
    background.ready("bg-test-not-queued", timeout=60)  # not queued: waits for every import
    assert order == ["before", "named", "after"]


def test_ready_for_a_module_imported_already_does_not_wait_for_other_imports(caplog):
    gate = threading.Event()
    background.start("bg-test-unrelated", lambda: gate.wait(60))
    try:
        with caplog.at_level("WARNING", logger="server.background"):
            background.ready("json", timeout=5)  # a provider built again while another imports
        assert "stopped waiting" not in caplog.text
    finally:
        gate.set()
        background.ready("bg-test-unrelated")

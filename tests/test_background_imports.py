"""Background imports run on one thread, one at a time, and `ready` waits for a queued one: a
provider SDK and the shell parser imported on two threads at once handed the first model
call a partly initialized SDK (`module 'openai' has no attribute 'AsyncOpenAI'`)."""

from __future__ import annotations

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

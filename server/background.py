"""Modules imported beside the main thread, on one background thread, one at a time.

Two threads importing at once can meet on CPython's module locks; when its deadlock check
fires, one of them is handed a partly initialized module, and a thread that waited for another
thread's import of a module keeps the module object it found even when that import then fails
(seen here as a provider SDK without its client class, when the SDK and the shell parser were
imported on two threads while the first model call imported the SDK). So agentls's background
imports share one thread, and code about to import one of those modules (or what they import)
itself first waits for it (`ready`), then imports afresh.
"""

from __future__ import annotations

import importlib
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

READY_WAIT_S = 120.0

_lock = threading.Lock()
_pending: dict[str, tuple[threading.Event, list[Callable[[], None]]]] = {}
_jobs: queue.SimpleQueue[tuple[str, Callable[[], object]]] = queue.SimpleQueue()
_worker: threading.Thread | None = None


def start(
    name: str,
    load: Callable[[], object] | None = None,
    *,
    then: Callable[[], None] | None = None,
) -> None:
    """Import `name` (by `load`, or by importing it) on the background thread, unless it is
    imported or queued already; `then` runs after, whether the import worked or not (at once
    when `name` is imported already)."""
    global _worker
    with _lock:
        queued = _pending.get(name)
        if queued is not None:
            if then is not None:
                queued[1].append(then)
            return
        if name not in sys.modules:
            _pending[name] = (threading.Event(), [then] if then else [])
            _jobs.put((name, load or (lambda: importlib.import_module(name))))
            if _worker is None or not _worker.is_alive():
                _worker = threading.Thread(target=_work, name="agentls-imports", daemon=True)
                _worker.start()
            return
    if then is not None:
        then()


def ready(name: str, timeout: float = READY_WAIT_S) -> None:
    """Wait until `name`'s background import has ended, and every one queued before it (they
    run in order): the modules of one (an SDK's HTTP client, pydantic) are often the modules of
    another. Imports queued after `name` do not hold its caller up; when `name` is imported
    already, nothing does. When it is neither queued nor imported, wait for every import
    queued so far."""
    with _lock:
        if name in sys.modules and name not in _pending:
            return  # imported: what it imports is too
        queued = []
        for other, (done, _) in _pending.items():
            queued.append((other, done))
            if other == name:
                break
    deadline = time.monotonic() + timeout
    for other, done in queued:
        if not done.wait(max(0.0, deadline - time.monotonic())):
            log.warning("stopped waiting for the background import of %s (for %s)", other, name)
            return


def _work() -> None:
    while True:
        name, load = _jobs.get()
        try:
            load()
        except BaseException:  # SystemExit too: the import on first use reports the problem
            pass
        finally:
            with _lock:
                done, thens = _pending.pop(name)
            for then in thens:
                try:
                    then()
                except BaseException:  # the thread goes on with the next import
                    log.exception("after the background import of %s", name)
            done.set()

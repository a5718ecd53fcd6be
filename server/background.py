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
import queue
import sys
import threading
import time
from collections.abc import Callable

READY_WAIT_S = 120.0

_lock = threading.Lock()
_pending: dict[str, threading.Event] = {}
_jobs: queue.SimpleQueue[tuple[str, Callable[[], object], Callable[[], None] | None]] = (
    queue.SimpleQueue()
)
_worker: threading.Thread | None = None


def start(
    name: str,
    load: Callable[[], object] | None = None,
    *,
    then: Callable[[], None] | None = None,
) -> None:
    """Import `name` (by `load`, or by importing it) on the background thread, unless it is
    imported or queued already; `then` runs after, whether the import worked or not."""
    global _worker
    with _lock:
        if name in sys.modules or name in _pending:
            if then is not None and name in sys.modules and name not in _pending:
                then()
            return
        _pending[name] = threading.Event()
        _jobs.put((name, load or (lambda: importlib.import_module(name)), then))
        if _worker is None:
            _worker = threading.Thread(target=_work, name="agentls-imports", daemon=True)
            _worker.start()


def ready(name: str, timeout: float = READY_WAIT_S) -> None:
    """Wait until every background import queued so far has ended, not only `name`'s: the
    modules of one (an SDK's HTTP client, pydantic) are often the modules of another."""
    with _lock:
        queued = list(_pending.values())
    deadline = time.monotonic() + timeout
    for done in queued:
        done.wait(max(0.0, deadline - time.monotonic()))


def _work() -> None:
    while True:
        name, load, then = _jobs.get()
        try:
            load()
        except Exception:  # the import on first use reports the problem
            pass
        finally:
            if then is not None:
                then()
            _pending[name].set()

"""Start-up without the cyclic garbage collector.

Importing a provider SDK and the protocol models makes a few hundred thousand objects and next
to no garbage, yet the allocations trigger collections that walk all of them again and again:
about a fifth of a cold task's CPU. The collector is off from the command's start until the
provider is ready, then on again with everything start-up made frozen, so that later
collections (a turn's) do not walk those objects either: they live as long as the process.
"""

from __future__ import annotations

import gc
import threading

LONGEST_PAUSE_S = 20.0
"""A start-up that never reaches a provider (a server asked only to list sessions) turns the
collector back on after this long."""

_lock = threading.Lock()
_paused = False


def pause() -> None:
    global _paused
    with _lock:
        if _paused or not gc.isenabled():
            return
        gc.disable()
        _paused = True
    timer = threading.Timer(LONGEST_PAUSE_S, resume)
    timer.daemon = True
    timer.start()


def resume() -> None:
    global _paused
    with _lock:
        if not _paused:
            return
        _paused = False
        gc.freeze()
        gc.enable()


def paused() -> bool:
    return _paused

"""Turning persistence on for a server process: the default store, and the native engine's
providers wrapped so that every model call lands in the trace."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from server.sessions.store import Store

log = logging.getLogger(__name__)


def open_store(engines: dict[str, Any], environ: Mapping[str, str] | None = None) -> Store | None:
    """The data dir's store, or None when `AGENTLS_STORE=0` or it cannot be opened (the server
    then runs without persistence rather than not at all). Replaces a plain native engine in
    `engines` by one whose provider calls are traced. `environ`: a connection's environment
    (its `AGENTLS_HOME`) in place of this process's."""
    if (os.environ if environ is None else environ).get("AGENTLS_STORE", "1") == "0":
        return None
    store = reopen(environ)
    if store is None:
        log.warning("sessions will not be stored: %s", store_failure(environ))
        return None
    from server.engines.native import NativeEngine
    from server.providers.registry import create_provider
    from server.sessions.recording import recording_factory

    native = engines.get("native")
    if type(native) is NativeEngine:
        engines["native"] = NativeEngine(
            provider_factory=recording_factory(create_provider), environ=native.environ
        )
    return store


_FAILED: dict[str, str] = {}
"""Data dir -> why its store could not be opened, until it opens."""


def reopen(environ: Mapping[str, str] | None = None) -> Store | None:
    """The data dir's store, or None (its reason kept for `store_failure`)."""
    from server.logs import data_dir

    key = str(data_dir(environ))
    try:
        store = Store.open_default(environ)
    except Exception as exc:
        _FAILED[key] = str(exc) or type(exc).__name__
        return None
    _FAILED.pop(key, None)
    return store


def store_failure(environ: Mapping[str, str] | None = None) -> str | None:
    """Why the data dir's store could not be opened, or None (it opened, or was never tried)."""
    from server.logs import data_dir

    return _FAILED.get(str(data_dir(environ)))

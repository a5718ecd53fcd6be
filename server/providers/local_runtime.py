"""The llama.cpp runtime (`xllamacpp`) inside the agentls process: one loaded model per process,
generation on a worker thread, chunks handed to the event loop as they come.

`xllamacpp.Server` runs llama.cpp's server in-process; we call its chat-completions handler
directly. It also opens an HTTP listener, which we never use: it is bound to 127.0.0.1 on a
random port, behind a random API key, without the web UI.
"""

from __future__ import annotations

import importlib
import math
import os
import secrets
import threading
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from server.providers.local_cache import PromptCache, state_name
from server.providers.local_model import INSTALL_HINT, RUNTIME_MODULE, LocalModelError


@dataclass(frozen=True)
class RuntimeConfig:
    path: Path
    context: int = 8192
    threads: int = 2
    cache_dir: Path | None = None
    """Where the prompt state is kept across processes (`local_cache`); None: not kept."""


def default_threads() -> int:
    return max(1, min(8, os.cpu_count() or 2))


SPIN_COUNT = "1000000"
"""How long an ACTIVE thread spins before it sleeps (libgomp's GOMP_SPINCOUNT). Unbounded, as
ACTIVE is by default, an idle agentls kept a whole core busy after every answer; this bound
kept the speed (18 tokens/s) and the idle process at 0.03 s of CPU per 5 s."""


def wait_policy(load: float | None = None, cpus: int | None = None) -> str:
    """How OpenMP's idle threads wait: spinning (ACTIVE, for `SPIN_COUNT` rounds) when the
    machine is otherwise quiet, sleeping (PASSIVE) when other work runs. Measured on two
    cores: ACTIVE generates ~1.6x faster on a quiet machine (17 vs 11 tokens/s), while spinning
    threads on busy cores made generation several times slower."""
    cpus = cpus or os.cpu_count() or 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # no load average (Windows): play safe
            return "PASSIVE"
    return "ACTIVE" if load < 0.5 * cpus else "PASSIVE"


def openmp_environment(environ: Mapping[str, str], load: float | None = None) -> dict[str, str]:
    """The OpenMP settings to load the runtime with; what the user set wins."""
    policy = environ.get("OMP_WAIT_POLICY") or wait_policy(load)
    out = {"OMP_WAIT_POLICY": policy}
    if policy.upper() == "ACTIVE" and not environ.get("GOMP_SPINCOUNT"):
        out["GOMP_SPINCOUNT"] = SPIN_COUNT
    return out


def import_runtime(module: str = RUNTIME_MODULE) -> Any:
    """Import xllamacpp with OpenMP's wait policy chosen for this machine (`wait_policy`; a
    set OMP_WAIT_POLICY wins). OpenMP reads the variable once, when the library loads."""
    saved = {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    os.environ.update(openmp_environment(os.environ))
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise LocalModelError(
            f"the local model runtime ({module}) is not installed: run {INSTALL_HINT}, "
            "or choose a cloud model with --provider"
        ) from exc
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)


class LocalRuntime:
    """A loaded model. Thread-safe: llama.cpp queues concurrent requests on its one slot."""

    def __init__(
        self,
        config: RuntimeConfig,
        server: Any,
        load_seconds: float,
        cache: PromptCache | None = None,
    ) -> None:
        self.config = config
        self.load_seconds = load_seconds
        self.cache = cache
        self._server = server

    def complete(self, body: dict[str, Any], on_chunk: Any) -> None:
        """Blocking: stream one chat completion; `on_chunk` returns True to stop generation."""
        timings: list[dict[str, Any]] = []

        def watched(chunk: dict[str, Any]) -> bool:
            if isinstance(chunk.get("timings"), dict):
                timings.append(chunk["timings"])
            return on_chunk(chunk)

        self._server.handle_chat_completions(body, watched)
        if self.cache is not None:
            self.cache.after_completion(timings[-1] if timings else None)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The completion's chunks. Leaving the iteration early (cancel) stops generation at the
        next token; the caller is never kept waiting for it."""
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](math.inf)
        stop = threading.Event()
        token = anyio.lowlevel.current_token()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            if stop.is_set():
                return True
            try:
                anyio.from_thread.run_sync(send.send_nowait, chunk, token=token)
            except Exception:  # the loop is gone or the reader left: stop generating
                return True
            return False

        def work() -> None:
            try:
                self.complete(body, on_chunk)
            except Exception as exc:  # reported the way llama.cpp reports its own failures
                on_chunk({"error": {"message": f"{type(exc).__name__}: {exc}"}})
            finally:
                try:
                    anyio.from_thread.run_sync(send.close, token=token)
                except Exception:  # the event loop is gone: nobody is reading
                    pass

        thread = threading.Thread(target=work, name="agentls-local-model", daemon=True)
        thread.start()
        try:
            async with receive:
                async for chunk in receive:
                    yield chunk
        finally:
            stop.set()


BATCH = 256
_lock = threading.Lock()
_current: LocalRuntime | None = None


def load(config: RuntimeConfig) -> LocalRuntime:
    """The process's runtime for `config`, loading it on first use (blocking, seconds). A
    different model replaces the loaded one."""
    global _current
    with _lock:
        if _current is not None and _current.config == config:
            return _current
        _current = None  # free the old model's memory before loading the next
        _current = _build(config)
        return _current


def unload() -> None:
    """Let the loaded model go (its memory is freed once no caller holds the runtime)."""
    global _current
    with _lock:
        _current = None


def loaded(config: RuntimeConfig) -> bool:
    return _current is not None and _current.config == config


def _build(config: RuntimeConfig) -> LocalRuntime:
    xllamacpp = import_runtime()
    params = xllamacpp.CommonParams()
    params.model.path = str(config.path)
    params.n_ctx = config.context
    params.n_parallel = 1
    params.cpuparams.n_threads = config.threads
    params.cpuparams_batch.n_threads = config.threads
    params.cpuparams.poll = 0
    params.cpuparams_batch.poll = 0
    params.warmup = False
    # The prompt is read in batches of this many tokens, and a cancelled request stops only
    # between batches: 256 tokens is a few seconds on two cores, no slower than 512 here.
    params.n_batch = BATCH
    params.n_ubatch = BATCH
    params.verbosity = 0  # llama.cpp logs to stderr, which is the user's terminal
    params.cache_ram_mib = 512
    # The in-process server's HTTP side stays closed to everyone else.
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    api_key = secrets.token_urlsafe(24)
    params.api_keys = [api_key]
    params.ui = False
    params.offline = True
    cache_dir = _usable_cache_dir(config.cache_dir)
    params.endpoint_slots = cache_dir is not None  # slot save/restore: the prompt cache
    if cache_dir is not None:
        # llama.cpp joins this and the file name as strings: the separator is ours to add.
        params.slot_save_path = str(cache_dir) + os.sep
    params.endpoint_metrics = False
    params.endpoint_props = False
    started = time.monotonic()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        raise LocalModelError(f"cannot load the local model {config.path.name}: {exc}") from exc
    cache = None
    if cache_dir is not None:
        name = state_name(config.path, config.context)
        cache = PromptCache(cache_dir, name, server.listening_address, api_key)
        cache.restore()
    return LocalRuntime(config, server, time.monotonic() - started, cache)


def _usable_cache_dir(folder: Path | None) -> Path | None:
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None

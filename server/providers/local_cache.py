"""The embedded model's prompt cache on disk: the model's state after reading a prompt (its KV
cache), saved by llama.cpp's slot save and restored when the next process loads the model.

Every session's prompt starts with the same long part (the system prompt, the tool schemas, the
worked example), which takes a cold process tens of seconds to read on two cores. A process
restores the saved state when it loads the model, so only what differs is read again. It saves
the state once, after its first completion, when no state was restored or the restored one
covered less than half of that prompt (agentls or the offered tools changed); the file is
written under a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from server.providers.local_model import RUNTIME_MODULE

SUFFIX = ".state"
TIMEOUT = 60.0


def state_name(model: Path, context: int) -> str:
    """The state file's name: the model file and its size, the context size and the runtime's
    version (a state only fits the model, window and llama.cpp build that wrote it)."""
    try:
        version = importlib.metadata.version(RUNTIME_MODULE)
    except importlib.metadata.PackageNotFoundError:
        version = "0"
    size = model.stat().st_size if model.exists() else 0
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{model.stem}-{size}-c{context}-{version}")
    return stem + SUFFIX


@dataclass
class PromptCache:
    """One process's use of the state file `folder/name`, through the runtime's own HTTP side
    (`address`, `api_key`: bound to 127.0.0.1, open to nobody else)."""

    folder: Path
    name: str
    address: str
    api_key: str
    restored: int = 0
    _first_done: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def restore(self) -> int:
        """Load the saved state into the slot; the number of prompt tokens it holds (0: none,
        or one that does not load, which is then removed)."""
        if not (self.folder / self.name).is_file():
            return 0
        answer = self._slot_action("restore", self.name)
        if answer is None or not answer.get("n_restored"):
            with contextlib.suppress(OSError):
                (self.folder / self.name).unlink()
            return 0
        self.restored = int(answer["n_restored"])
        return self.restored

    def after_completion(self, timings: dict[str, Any] | None) -> None:
        """Called after each completion with llama.cpp's `timings`; saves after the first one
        when the state on disk did not serve it."""
        with self._lock:
            if self._first_done or not timings:
                return
            self._first_done = True
        reused = int(timings.get("cache_n") or 0)
        prompt = reused + int(timings.get("prompt_n") or 0)
        if self.restored and reused * 2 >= prompt:
            return
        self.save()

    def save(self) -> bool:
        temporary = f"{self.name}.{os.getpid()}.tmp"
        answer = self._slot_action("save", temporary)
        if answer is None or not answer.get("n_saved"):
            with contextlib.suppress(OSError):
                (self.folder / temporary).unlink()
            return False
        try:
            os.replace(self.folder / temporary, self.folder / self.name)
        except OSError:
            return False
        return True

    def _slot_action(self, action: str, filename: str) -> dict[str, Any] | None:
        try:
            response = httpx.post(
                f"{self.address}/slots/0",
                params={"action": action},
                json={"filename": filename},
                headers={"Authorization": f"Bearer {self.api_key}"},
                timeout=TIMEOUT,
                trust_env=False,  # our own listener: never through a configured proxy
            )
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        try:
            answer = response.json()
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None

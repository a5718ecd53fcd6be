"""A minimal LSP-framed JSON-RPC client for benchmarks (no test framework, no pygls)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        AGENTLS_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        HOME=str(home),
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


class Connection:
    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc
        self._ids = itertools.count(1)
        self._buf = b""
        self._pos = 0
        self._reader: asyncio.Task | None = None
        self._waiting: dict[int, asyncio.Future] = {}
        self.notifications: list[tuple[float, dict[str, Any]]] = []

    @classmethod
    async def spawn(cls, env: dict[str, str], *args: str) -> Connection:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            *args,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return cls(proc)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _frame(self) -> dict[str, Any]:
        # Index arithmetic over one buffer: the client must not be the bottleneck it measures.
        while True:
            end = self._buf.find(b"\r\n\r\n", self._pos)
            if end >= 0:
                start = self._buf.find(b"Content-Length:", self._pos, end) + 15
                length = int(self._buf[start:end].split(b"\r\n", 1)[0])
                body_end = end + 4 + length
                if len(self._buf) >= body_end:
                    body = self._buf[end + 4 : body_end]
                    self._pos = body_end
                    if self._pos > 1 << 20:
                        self._buf, self._pos = self._buf[self._pos :], 0
                    return json.loads(body)
            chunk = await self.proc.stdout.read(1 << 20)
            if not chunk:
                raise EOFError("server closed stdout")
            self._buf += chunk

    async def call(self, method: str, params: Any) -> Any:
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_loop())
        msg_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        frame = await future
        if "error" in frame:
            raise RuntimeError(frame["error"])
        return frame["result"]

    async def _read_loop(self) -> None:
        try:
            while True:
                frame = await self._frame()
                if "method" not in frame:
                    waiter = self._waiting.pop(frame.get("id"), None)
                    if waiter and not waiter.done():
                        waiter.set_result(frame)
                elif "id" in frame:  # a server->client request: allow
                    self.send({"jsonrpc": "2.0", "id": frame["id"], "result": {
                        "outcome": {"outcome": "selected", "optionId": "allow_once"}}})
                else:
                    self.notifications.append((time.perf_counter(), frame))
        except (EOFError, ConnectionError) as exc:
            for waiter in self._waiting.values():
                if not waiter.done():
                    waiter.set_exception(EOFError(str(exc)))

    async def initialize(self) -> Any:
        caps = {"experimental": {"agentls": {"permissions": True, "questions": True}}}
        result = await self.call("initialize", {"processId": None, "capabilities": caps})
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return result

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.call("shutdown", None), 5)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            await asyncio.wait_for(self.proc.wait(), 5)
        except (TimeoutError, EOFError, ConnectionError):
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()

"""Blocking clients for the four agent protocols the peer suite drives, one process each:
agentls's native JSON-RPC (LSP framing), stream-json (agentls and the Claude Code CLI), ACP
(agentls and claude-agent-acp) and Codex's app-server (JSON-RPC lines).

Each client starts its process, runs turns (`turn(text)` returns the streamed answer) and
closes stdin to let it exit. Server-to-client requests are answered at once: the first
"allow" option for permissions, "accept" for approvals.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any


class Process:
    """A child in its own process group, stdout read frame by frame, stderr to a file."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        self.started = time.perf_counter()
        with log.open("ab") as err:
            self.proc = subprocess.Popen(
                cmd,
                env=env,
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.log = log

    @property
    def pid(self) -> int:
        return self.proc.pid

    def write(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def line(self) -> dict[str, Any]:
        while True:
            raw = self.stdout.readline()
            if not raw:
                tail = self.log.read_text(errors="replace")[-800:]
                raise RuntimeError(f"{self.proc.args[0]} closed its output: {tail}")
            if raw.strip().startswith(b"{"):
                return json.loads(raw)

    def close(self, grace: float = 1.0) -> tuple[float, bool]:
        """Close stdin and wait for the exit: how long the exit took, and whether the process
        ended by itself. One still running after `grace` seconds gets SIGTERM, as editors do;
        its exit time is then counted from the signal."""
        closed = time.perf_counter()
        self.stdin.close()
        try:
            self.proc.wait(grace)
            return time.perf_counter() - closed, True
        except subprocess.TimeoutExpired:
            signalled = time.perf_counter()
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(30)
            return time.perf_counter() - signalled, False
        finally:
            self.kill()

    def kill(self) -> None:
        """End the process group: whatever the agent left behind, or the agent itself when a
        run failed."""
        end_group(self.proc, grace=0)


def end_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM to the process group (SIGKILL at once without a grace), SIGKILL to what is left
    after `grace` seconds, and return once no member is alive: one still shutting down would
    write into a directory about to be removed."""
    killed = not grace
    try:
        os.killpg(proc.pid, signal.SIGKILL if killed else signal.SIGTERM)
    except ProcessLookupError:
        pass
    last_chance = time.monotonic() + (grace or 30)
    while True:
        proc.poll()
        if not group_running(proc.pid):
            break
        if not killed and time.monotonic() > last_chance:
            os.killpg(proc.pid, signal.SIGKILL)
            killed, last_chance = True, time.monotonic() + 30
        elif killed and time.monotonic() > last_chance:
            raise RuntimeError(f"process group {proc.pid} outlived SIGKILL")
        time.sleep(0.02)
    proc.wait()


class Client:
    """A JSON-RPC peer over `Process`: requests by id, notifications to `on_notification`."""

    def __init__(self, process: Process, *, jsonrpc: bool = True) -> None:
        self.p = process
        self._ids = itertools.count(1)
        self._jsonrpc = jsonrpc
        self.notifications: list[dict[str, Any]] = []

    def encode(self, message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    def read(self) -> dict[str, Any]:
        return self.p.line()

    def send(self, message: dict[str, Any]) -> None:
        if self._jsonrpc:
            message = {"jsonrpc": "2.0", **message}
        self.p.write(self.encode(message))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({} if params is None else {"params": params})})

    def call(self, method: str, params: Any, *, until: str | None = None) -> dict[str, Any]:
        """Send a request; return its result, or with `until` the params of that notification
        once the result has come too."""
        n = next(self._ids)
        self.send({"id": n, "method": method, "params": params})
        result: dict[str, Any] | None = None
        ended: dict[str, Any] | None = None
        while result is None or (until is not None and ended is None):
            message = self.read()
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": self.answer(message)})
            elif "method" in message:
                self.notifications.append(message)
                if message["method"] == until:
                    ended = message.get("params") or {}
            elif message.get("id") == n:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result = message.get("result") or {}
        return ended if until is not None and ended is not None else result

    def answer(self, request: dict[str, Any]) -> Any:
        options = (request.get("params") or {}).get("options") or []
        allow = next((o for o in options if str(o.get("kind", "")).startswith("allow")), None)
        if allow is not None:
            return {"outcome": {"outcome": "selected", "optionId": allow["optionId"]}}
        return {"decision": "accept"}


class LspClient(Client):
    """`Content-Length` framing, as `agentls serve` speaks it."""

    def encode(self, message: dict[str, Any]) -> bytes:
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def read(self) -> dict[str, Any]:
        length = 0
        while True:
            header = self.p.stdout.readline()
            if not header:
                raise RuntimeError("agentls serve closed its output")
            if header in (b"\r\n", b"\n"):
                break
            name, _, value = header.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.p.stdout.read(length))


class Door(ABC):
    """One agent process behind one protocol: `open()`, then `turn()` any number of times."""

    def __init__(self, process: Process, cwd: Path) -> None:
        self.process = process
        self.cwd = cwd

    @abstractmethod
    def open(self) -> None: ...

    @abstractmethod
    def turn(self, text: str) -> str: ...


class NativeDoor(Door):
    def open(self) -> None:
        self.rpc = LspClient(self.process)
        self.rpc.call("initialize", {"processId": os.getpid(), "capabilities": {}, "rootUri": None})
        self.rpc.notify("initialized", {})
        self.session = self.rpc.call("session/new", {"cwd": str(self.cwd)})["sessionId"]

    def turn(self, text: str) -> str:
        self.rpc.notifications.clear()
        prompt = [{"type": "text", "text": text}]
        result = self.rpc.call("session/prompt", {"sessionId": self.session, "prompt": prompt})
        if result.get("terminal") != "completed":
            raise RuntimeError(f"agentls serve: {result}")
        updates = [n["params"]["update"] for n in self.rpc.notifications if "params" in n]
        return "".join(u["text"] for u in updates if u.get("kind") == "agent_message_chunk")


class AcpDoor(Door):
    def open(self) -> None:
        self.rpc = Client(self.process)
        capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
        self.rpc.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        new = {"cwd": str(self.cwd), "mcpServers": []}
        self.session = self.rpc.call("session/new", new)["sessionId"]

    def turn(self, text: str) -> str:
        self.rpc.notifications.clear()
        prompt = [{"type": "text", "text": text}]
        result = self.rpc.call("session/prompt", {"sessionId": self.session, "prompt": prompt})
        if result.get("stopReason") != "end_turn":
            raise RuntimeError(f"ACP prompt ended {result}")
        updates = [n["params"]["update"] for n in self.rpc.notifications if "params" in n]
        chunks = [u for u in updates if u.get("sessionUpdate") == "agent_message_chunk"]
        return "".join(u["content"].get("text", "") for u in chunks)


class StreamJsonDoor(Door):
    def open(self) -> None:
        """Raw stream-json needs no handshake: the first user line starts the session."""

    def turn(self, text: str) -> str:
        user = {"type": "user", "message": {"role": "user", "content": text}}
        self.process.write(json.dumps(user | {"parent_tool_use_id": None}).encode() + b"\n")
        while (frame := self.process.line()).get("type") != "result":
            pass
        if frame.get("is_error"):
            raise RuntimeError(f"stream-json result: {frame}")
        return str(frame.get("result", ""))


class CodexDoor(Door):
    """Codex's app-server: `initialize`, `thread/start`, then `turn/start` per turn, which
    ends with the `turn/completed` notification."""

    def open(self) -> None:
        self.rpc = Client(self.process, jsonrpc=False)
        self.rpc.call("initialize", {"clientInfo": {"name": "agentls-bench", "version": "1"}})
        self.rpc.notify("initialized")
        started = self.rpc.call("thread/start", {"cwd": str(self.cwd)})
        self.thread = started["thread"]["id"]

    def turn(self, text: str) -> str:
        self.rpc.notifications.clear()
        params = {"threadId": self.thread, "input": [{"type": "text", "text": text}]}
        done = self.rpc.call("turn/start", params, until="turn/completed")
        if done["turn"].get("status") != "completed":
            raise RuntimeError(f"codex turn: {done['turn']}")
        items = [
            n["params"]["item"] for n in self.rpc.notifications if n["method"] == "item/completed"
        ]
        return "".join(i.get("text", "") for i in items if i.get("type") == "agentMessage")


def group_running(pgid: int) -> bool:
    """Whether a member of the group still runs. Zombies do not count: an orphan's zombie stays
    until its new parent reaps it, which a container's init may never do."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except OSError:
            continue
        if int(group) == pgid and state not in ("Z", "X"):
            return True
    return False

"""Test clients for `agentls serve`: a real pygls client over real stdio, and a raw byte pipe."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import BaseLanguageClient

from server.frontends.jsonrpc_bridge import AgentlsProtocol, make_converter
from server.testing.fake_llm import FakeModelServer
from tests.conftest import write_project_config

ROOT = Path(__file__).resolve().parents[1]
STOP_WAIT_S = 60.0


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("AGENTLS_SCRIPT", None)
    env.update(
        AGENTLS_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        HOME=str(home),
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


class AgentClient(BaseLanguageClient):
    """Spawns `agentls serve`, records every session/update, answers interaction requests."""

    def __init__(self) -> None:
        super().__init__(
            "agentls-tests", "0", protocol_cls=AgentlsProtocol, converter_factory=make_converter
        )
        self.updates: list[dict[str, Any]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.question_requests: list[dict[str, Any]] = []
        self.on_permission: Callable[[dict], Any] = lambda p: {
            "outcome": {"outcome": "selected", "optionId": "allow_once"}
        }
        self.on_question: Callable[[dict], Any] = lambda p: {"declined": True}
        self.update_event = asyncio.Event()
        self.stderr = bytearray()

        @self.feature("session/update")
        def _update(params):
            self.updates.append(params)
            self.update_event.set()

        @self.feature("session/request_permission")
        async def _permission(params):
            self.permission_requests.append(params)
            answer = self.on_permission(params)
            return await answer if asyncio.iscoroutine(answer) else answer

        @self.feature("session/ask_question")
        async def _question(params):
            self.question_requests.append(params)
            answer = self.on_question(params)
            return await answer if asyncio.iscoroutine(answer) else answer

    async def start(self, env: dict[str, str], *args: str, **spawn: Any) -> None:
        """`spawn`: more arguments for the process (e.g. `preexec_fn`)."""
        await self.start_io(sys.executable, "-m", "server.cli", "serve", *args, env=env, **spawn)
        self._async_tasks.append(asyncio.create_task(self._drain_stderr()))

    async def _drain_stderr(self) -> None:
        # read always: a server whose stderr pipe fills blocks on its next log line
        assert self._server is not None and self._server.stderr is not None
        while chunk := await self._server.stderr.read(65536):
            self.stderr += chunk

    async def stop(self) -> None:
        """Stop the client; a server still running after a generous wait has its stacks
        printed (SIGUSR1) for the failing test's report, then is killed."""
        self._stop_event.set()
        server = self._server
        if server is not None and server.returncode is None:
            try:
                await asyncio.wait_for(asyncio.shield(server.wait()), STOP_WAIT_S)
            except TimeoutError:
                server.send_signal(signal.SIGUSR1)
                await asyncio.sleep(2)
                server.kill()
                await server.wait()
                print(
                    f"agentls serve did not exit; its stderr:\n{self.stderr.decode(errors='replace')}"
                )
        if self._async_tasks:
            await asyncio.gather(*self._async_tasks, return_exceptions=True)

    async def initialize(self, agentls_caps: dict[str, Any] | None = None) -> lsp.InitializeResult:
        caps = {"permissions": True, "questions": True} if agentls_caps is None else agentls_caps
        result = await self.initialize_async(
            lsp.InitializeParams(
                capabilities=lsp.ClientCapabilities(experimental={"agentls": caps}),
                process_id=os.getpid(),
            )
        )
        self.initialized(lsp.InitializedParams())
        return result

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        return await self.protocol.send_request_async(method, params)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.protocol.notify(method, params)

    async def wait_for(self, predicate: Callable[[dict], bool], timeout: float = 60) -> dict:
        async def scan() -> dict:
            while True:
                for u in self.updates:
                    if predicate(u):
                        return u
                self.update_event.clear()
                await self.update_event.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def close(self) -> None:
        for future in list(self.protocol._request_futures.values()):
            if isinstance(future, asyncio.Task) and not future.done():
                future.cancel()
        if self._server and self._server.returncode is None:
            try:
                await asyncio.wait_for(self.shutdown_async(None), 60)
                self.exit(None)
            except Exception:
                self._server.kill()
            try:
                await asyncio.wait_for(self._server.wait(), 60)
            except TimeoutError:
                self._server.kill()
        await self.stop()


FAKE_MODELS = {
    "openai": ("gpt-5.5", "OPENAI_API_KEY", lambda f: f.openai_base_url),
    "anthropic": ("claude-sonnet-4-6", "ANTHROPIC_API_KEY", lambda f: f.anthropic_base_url),
    # Ollama takes no key; the variable is set all the same
    "ollama": ("llama3.2", "OLLAMA_API_KEY", lambda f: f.ollama_base_url),
}


def use_fake_model(
    workspace: Path,
    fake_llm: FakeModelServer,
    provider: str = "openai",
    *,
    user: dict[str, Any] | None = None,
    **config: Any,
) -> None:
    """Point the workspace's config at the loopback fake model, without retries; `config` adds
    top-level keys, `user` keys of the user config (`write_project_config`)."""
    model, _, url = FAKE_MODELS[provider]
    llm = {"provider": provider, "model": model, "baseUrl": url(fake_llm), "maxRetries": 0}
    write_project_config(workspace, {"llm": llm, **config}, user=user)


async def start(
    tmp_path: Path,
    workspace: Path,
    fake_llm: FakeModelServer,
    provider: str = "openai",
    spawn: dict[str, Any] | None = None,
    **config,
) -> AgentClient:
    """`agentls serve` (not yet initialized) for a workspace that uses the fake model."""
    use_fake_model(workspace, fake_llm, provider, **config)
    client = AgentClient()
    env = server_env(tmp_path, **{FAKE_MODELS[provider][1]: "test-key"})
    await client.start(env, **(spawn or {}))
    return client


async def new_session(client: AgentClient, workspace: Path, **extra: Any) -> str:
    result = await client.call("session/new", {"cwd": str(workspace), **extra})
    return result["sessionId"]


async def open_session(
    tmp_path: Path,
    workspace: Path,
    fake_llm: FakeModelServer,
    caps: dict[str, Any] | None = None,
    **config: Any,
) -> tuple[AgentClient, str]:
    """`start`, initialize with `caps`, and open a session in the workspace."""
    client = await start(tmp_path, workspace, fake_llm, **config)
    await client.initialize(caps)
    return client, await new_session(client, workspace)


def prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [u["update"]["kind"] for u in updates]


class RawPipe:
    """Bytes in, frames out: for malformed-input tests the pygls client cannot express."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc
        self._buf = b""

    @classmethod
    async def spawn(cls, env: dict[str, str]) -> RawPipe:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return cls(proc)

    def write(self, data: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(data)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def read(self, timeout: float = 60) -> dict[str, Any]:
        assert self.proc.stdout

        async def one() -> dict[str, Any]:
            while b"\r\n\r\n" not in self._buf:
                self._buf += await self.proc.stdout.read(4096)
            header, rest = self._buf.split(b"\r\n\r\n", 1)
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            while len(rest) < length:
                rest += await self.proc.stdout.read(4096)
            self._buf = rest[length:]
            return json.loads(rest[:length])

        return await asyncio.wait_for(one(), timeout)

    async def close(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()

"""A resident server (`agentls serve --listen`) and the bridge editors spawn instead of
`agentls serve` (`agentls serve --connect`): real processes, real sockets, the pygls client, a
`websockets` client, and fake models that check the API key."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from server.testing.fake_llm import FakeModelServer, Reply
from tests.agent_client import FAKE_MODELS, ROOT, AgentClient, new_session, prompt, server_env
from tests.conftest import write_project_config

pytestmark = pytest.mark.timeout(300)
WAIT_S = 120.0
TOKEN = "s3cret-token-for-tests-" + "0123456789" * 3


@pytest.fixture
def run_dir() -> Iterator[Path]:
    """A short private runtime dir: Unix socket paths are limited to 107 characters."""
    with tempfile.TemporaryDirectory(prefix="al-") as tmp:
        path = Path(tmp)
        path.chmod(0o700)
        yield path
        for pid in resident_pids(path):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def resident_pids(run_dir: Path) -> list[int]:
    """Resident servers listening under `run_dir` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--listen" in argv and any(str(run_dir).encode() in a for a in argv):
            found.append(int(entry.name))
    return found


def home(tmp_path: Path, name: str, run_dir: Path, **extra: str) -> tuple[Path, dict[str, str]]:
    """A user's own home and workspace, and the bridge's environment."""
    root = tmp_path / name
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    return workspace, server_env(root, XDG_RUNTIME_DIR=str(run_dir), **extra)


def use_fake(workspace: Path, fake: FakeModelServer) -> None:
    model, _, url = FAKE_MODELS["openai"]
    write_project_config(
        workspace, {"llm": {"provider": "openai", "model": model, "baseUrl": url(fake)}}
    )
    config = workspace.parent / "config" / "agentls" / "config.json"
    data = json.loads(config.read_text())
    data["llm"]["maxRetries"] = 0
    config.write_text(json.dumps(data))


@asynccontextmanager
async def bridged(env: dict[str, str], *args: str) -> AsyncIterator[AgentClient]:
    client = AgentClient()
    await client.start(env, "--connect", *args)
    try:
        await client.initialize()
        yield client
    finally:
        await client.close()


async def finished(client: AgentClient, session_id: str, text: str) -> dict[str, Any]:
    return await asyncio.wait_for(client.call("session/prompt", prompt(session_id, text)), WAIT_S)


def message_text(updates: list[dict[str, Any]]) -> str:
    chunks = [u["update"] for u in updates if u["update"]["kind"] == "agent_message_chunk"]
    return "".join(c["text"] for c in chunks)


class HeldReply:
    """A model reply held back until released: a turn that stays running while a test acts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.asked, self.held = threading.Event(), threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.asked.set()
        self.held.wait(WAIT_S)
        return Reply(text=self.text)


async def wait_until(check, what: str) -> Any:
    async def poll() -> Any:
        while not (value := check()):
            await asyncio.sleep(0.05)
        return value

    try:
        return await asyncio.wait_for(poll(), WAIT_S)
    except TimeoutError:
        raise AssertionError(f"never happened: {what}") from None


# -- two users on one server -----------------------------------------------------------------


async def test_two_principals_on_one_resident_server_keep_keys_sessions_and_events_apart(
    tmp_path: Path, run_dir: Path
) -> None:
    """alice owns the server; bob is a principal her user config maps to his own data dir."""
    with (
        FakeModelServer(api_key="sk-alice-0123456789") as fake_a,
        FakeModelServer(api_key="sk-bob-9876543210") as fake_b,
    ):
        ws_a, env_a = home(tmp_path, "alice", run_dir, OPENAI_API_KEY="sk-alice-0123456789")
        ws_b, env_b = home(tmp_path, "bob", run_dir, OPENAI_API_KEY="sk-bob-9876543210")
        use_fake(ws_a, fake_a)
        use_fake(ws_b, fake_b)
        bob_token = token_file(tmp_path, "bob-" + TOKEN, name="bob.token")
        config = tmp_path / "alice" / "config" / "agentls" / "config.json"
        principals = {"bob": {"tokenFile": str(bob_token), "home": env_b["AGENTLS_HOME"]}}
        config.write_text(
            json.dumps({**json.loads(config.read_text()), "server": {"principals": principals}})
        )
        bob_flags = ("--token-file", str(bob_token), "--base-url", FAKE_MODELS["openai"][2](fake_b))
        fake_a.script(Reply(text="answer for alice"))
        fake_b.script(Reply(text="answer for bob"), Reply(text="bob again"))
        alice_token = token_file(tmp_path, TOKEN, name="alice.token")
        server = listening(env_a, "tcp://127.0.0.1:0", "--token-file", str(alice_token))
        async with server as (address, _):
            async with (
                bridged(env_a, address, "--token-file", str(alice_token)) as alice,
                bridged(env_b, address, *bob_flags) as bob,
            ):
                sid_a = await new_session(alice, ws_a)
                sid_b = await new_session(bob, ws_b)
                result_a, result_b = await asyncio.gather(
                    finished(alice, sid_a, "hello"), finished(bob, sid_b, "hello")
                )
                assert (result_a["terminal"], result_b["terminal"]) == ("completed", "completed")
                listed_a = await alice.call("session/list", {})
                listed_b = await bob.call("session/list", {})
                with pytest.raises(Exception) as foreign:
                    await bob.call("session/load", {"sessionId": sid_a})
            assert {u["sessionId"] for u in alice.updates} == {sid_a}
            assert {u["sessionId"] for u in bob.updates} == {sid_b}
            assert message_text(alice.updates) == "answer for alice"
            assert message_text(bob.updates) == "answer for bob"
            assert [s["sessionId"] for s in listed_a["data"]] == [sid_a]
            assert [s["sessionId"] for s in listed_b["data"]] == [sid_b]
            assert getattr(foreign.value, "code", None) == -31001  # SessionNotFound
            assert [r.headers["authorization"] for r in fake_a.requests] == [
                "Bearer sk-alice-0123456789"
            ]
            assert [r.headers["authorization"] for r in fake_b.requests] == [
                "Bearer sk-bob-9876543210"
            ]
            # alice has left (shutdown and exit end her connection only): bob's session goes on
            async with bridged(env_b, address, *bob_flags) as bob_again:
                await bob_again.call("session/load", {"sessionId": sid_b})
                again = await finished(bob_again, sid_b, "and again")
            assert again["terminal"] == "completed"
            assert fake_b.requests[-1].headers["authorization"] == "Bearer sk-bob-9876543210"
    for path in tmp_path.glob("*/data/**/*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"sk-alice-0123456789" not in data and b"sk-bob-9876" not in data, path


# -- tokens and socket modes -----------------------------------------------------------------


@asynccontextmanager
async def listening(
    env: dict[str, str], *args: str
) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """`agentls serve --listen ...`; yields the address it printed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "serve", "--listen", *args,
        env=env, cwd=ROOT, stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        line = await asyncio.wait_for(proc.stderr.readline(), WAIT_S)
        assert line.startswith(b"agentls: listening on "), line
        drain = asyncio.ensure_future(proc.stderr.read())
        yield line.decode().removeprefix("agentls: listening on ").strip(), proc
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), WAIT_S)
        with suppress(Exception):
            await drain


def token_file(tmp_path: Path, token: str = TOKEN, name: str = "token") -> Path:
    path = tmp_path / name
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


class Raw:
    """LSP-framed JSON over a plain socket, for what a well-behaved client never sends."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    @classmethod
    async def tcp(cls, address: str) -> Raw:
        host, port = address.removeprefix("tcp://").rsplit(":", 1)
        return cls(*await asyncio.open_connection(host, int(port)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def read(self) -> dict[str, Any] | None:
        try:
            header = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), WAIT_S)
        except asyncio.IncompleteReadError:
            return None
        length = int(header.split(b":", 1)[1].split(b"\r\n")[0])
        return json.loads(await self.reader.readexactly(length))

    async def closed(self) -> bool:
        return await asyncio.wait_for(self.reader.read(), WAIT_S) == b""


def request(msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


INITIALIZE = {"processId": None, "capabilities": {}}


async def test_tcp_refuses_a_wrong_or_missing_token_before_any_method_runs(
    tmp_path: Path,
) -> None:
    env = server_env(tmp_path)
    token = token_file(tmp_path)
    async with listening(env, "tcp://127.0.0.1:0", "--token-file", str(token)) as (address, _):
        raw = await Raw.tcp(address)
        raw.send(request(1, "initialize", INITIALIZE))
        answer = await raw.read()
        assert answer is not None and answer["error"]["code"] == -31005
        assert await raw.closed()

        raw = await Raw.tcp(address)
        raw.send(request(1, "connection/attach", {"token": "guess"}))
        answer = await raw.read()
        assert answer == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -31005, "message": "wrong or missing token"},
        }
        assert await raw.closed()

        raw = await Raw.tcp(address)
        raw.send(request(1, "connection/attach", {"token": TOKEN}))
        attached = await raw.read()
        assert attached is not None and attached["result"]["pid"] > 0
        raw.send(request(2, "initialize", INITIALIZE))
        initialized = await raw.read()
        assert initialized is not None and "agentls" in json.dumps(initialized["result"])
        raw.send(request(3, "connection/attach", {"token": TOKEN}))
        again = await raw.read()
        assert again is not None and again["error"]["code"] == -32600
        raw.writer.close()

        (tmp_path / "other").mkdir()
        wrong = token_file(tmp_path / "other", "not-the-token-" + "x" * 40)
        bridge = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.cli", "serve", "--connect", address,
            "--token-file", str(wrong), env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(bridge.communicate(), WAIT_S)
        assert bridge.returncode == 1 and out == b""
        assert b"refused this connection: wrong or missing token" in err


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:0", "ws://0.0.0.0:0"])
async def test_a_network_address_without_a_token_does_not_start(
    tmp_path: Path, address: str
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "serve", "--listen", address,
        env=server_env(tmp_path), stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), WAIT_S)
    assert proc.returncode == 1
    assert b"needs a token: --token-file FILE" in err


async def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = token_file(tmp_path)
    path.chmod(0o644)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "serve", "--listen", "tcp://127.0.0.1:0",
        "--token-file", str(path), env=server_env(tmp_path), stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), WAIT_S)
    assert proc.returncode == 1 and b"readable by others (mode 644); chmod 600 it" in err


async def test_the_bridge_refuses_a_socket_others_may_open(tmp_path: Path, run_dir: Path) -> None:
    env = server_env(tmp_path, XDG_RUNTIME_DIR=str(run_dir))
    path = run_dir / "open.sock"
    async with listening(env, f"unix:{path}"):
        assert path.stat().st_mode & 0o777 == 0o600
        path.chmod(0o666)
        bridge = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.cli", "serve", "--connect", f"unix:{path}",
            env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(bridge.communicate(), WAIT_S)
    assert bridge.returncode == 1 and out == b""
    assert b"is open to others (mode 666, not 600)" in err


async def test_the_python_client_attaches_through_the_bridge(tmp_path: Path, run_dir: Path) -> None:
    from protocol.client import Client

    with FakeModelServer() as fake:
        workspace, env = home(tmp_path, "user", run_dir, OPENAI_API_KEY="sk-test-key-123")
        use_fake(workspace, fake)
        fake.script(Reply(text="through the bridge"), Reply(text="the same server"))
        answers = []
        for text in ("first", "second"):
            async with await Client.spawn(args=["--connect"], env=env, cwd=workspace) as client:
                session = await client.new_session(workspace)
                turn = session.prompt(text)
                await turn.wait()
                answers.append(turn.text)
                answers.append(resident_pids(run_dir))
    assert answers[0::2] == ["through the bridge", "the same server"]
    [first], [second] = answers[1::2]
    assert first == second  # one resident server, reached by both clients


# -- restarts --------------------------------------------------------------------------------


async def test_kill_9_mid_turn_the_next_bridge_starts_a_new_server_and_load_works(
    tmp_path: Path, run_dir: Path
) -> None:
    slow = HeldReply("never seen")

    with FakeModelServer() as fake:
        workspace, env = home(tmp_path, "user", run_dir, OPENAI_API_KEY="sk-test-key-123")
        use_fake(workspace, fake)
        fake.script(Reply(text="first answer"), slow, Reply(text="after the crash"))
        client = AgentClient()
        await client.start(env, "--connect")
        try:
            await client.initialize()
            sid = await new_session(client, workspace)
            assert (await finished(client, sid, "one"))["terminal"] == "completed"
            pending = asyncio.ensure_future(client.call("session/prompt", prompt(sid, "two")))
            await wait_until(slow.asked.is_set, "the second model call")
            [pid] = resident_pids(run_dir)
            os.kill(pid, signal.SIGKILL)
            await wait_until(lambda: pending.done() or client._server.returncode is not None,
                             "the bridge noticing")  # fmt: skip
        finally:
            slow.held.set()
            await client.close()
        pending.cancel()
        async with bridged(env) as again:
            [new_pid] = await wait_until(lambda: resident_pids(run_dir), "a new resident server")
            assert new_pid != pid
            loaded = await again.call("session/load", {"sessionId": sid})
            assert loaded["sessionId"] == sid
            replayed = json.dumps(again.updates)
            assert "first answer" in replayed and '"two"' in replayed
            result = await finished(again, sid, "three")
        assert result["terminal"] == "completed"
        last = fake.requests[-1].body["messages"]
        assert next(m["content"] for m in last if m["role"] == "assistant") == "first answer"


async def test_bridges_started_together_share_one_resident_server(
    tmp_path: Path, run_dir: Path
) -> None:
    workspace, env = home(tmp_path, "user", run_dir, AGENTLS_PROVIDER="scripted")
    async with (
        bridged(env) as one,
        bridged(env) as two,
        bridged(env) as three,
    ):
        for client in (one, two, three):
            await new_session(client, workspace)
        assert len(resident_pids(run_dir)) == 1


async def test_sigusr1_writes_a_resident_servers_stacks_to_its_log_and_it_goes_on(
    tmp_path: Path, run_dir: Path
) -> None:
    """What a stuck resident server waits on, as `agentls serve` says it (`kill -USR1`)."""
    workspace, env = home(tmp_path, "user", run_dir, AGENTLS_PROVIDER="scripted")
    async with bridged(env) as client:
        await new_session(client, workspace)
        [pid] = resident_pids(run_dir)
        os.kill(pid, signal.SIGUSR1)
        [log] = (run_dir / "agentls").glob("*.log")
        await wait_until(lambda: "-- <Task" in log.read_text(), "stacks in the server's log")
        await new_session(client, workspace)
        assert resident_pids(run_dir) == [pid]
    assert "Current thread" in log.read_text()


async def test_an_idle_resident_server_exits_by_itself(tmp_path: Path, run_dir: Path) -> None:
    env = server_env(tmp_path, XDG_RUNTIME_DIR=str(run_dir), AGENTLS_PROVIDER="scripted")
    path = run_dir / "idle.sock"
    async with listening(env, f"unix:{path}", "--idle-timeout", "0.5") as (_, proc):
        async with bridged(env, f"unix:{path}") as client:
            await new_session(client, tmp_path)
        assert await asyncio.wait_for(proc.wait(), WAIT_S) == 0
    assert not path.exists()


# -- WebSocket -------------------------------------------------------------------------------


async def test_a_websocket_client_runs_a_whole_turn(tmp_path: Path, workspace: Path) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    with FakeModelServer(api_key="sk-ws-client-key") as fake:
        use_fake(workspace, fake)
        fake.script(Reply(text="over the websocket"))
        token = token_file(tmp_path)
        env = server_env(tmp_path)
        async with listening(env, "ws://127.0.0.1:0", "--token-file", str(token)) as (address, _):
            with pytest.raises(InvalidStatus) as refused:
                async with connect(address):
                    pass
            assert refused.value.response.status_code == 401
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with connect(address, additional_headers=headers) as ws:
                key_env = {**env, "OPENAI_API_KEY": "sk-ws-client-key"}
                await ws.send(json.dumps(request(1, "connection/attach", {"env": key_env})))
                assert "pid" in json.loads(await ws.recv())["result"]
                await ws.send(json.dumps(request(2, "initialize", INITIALIZE)))
                assert json.loads(await ws.recv())["id"] == 2
                await ws.send(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
                await ws.send(json.dumps(request(3, "session/new", {"cwd": str(workspace)})))
                sid = json.loads(await ws.recv())["result"]["sessionId"]
                await ws.send(json.dumps(request(4, "session/prompt", prompt(sid, "hi"))))
                updates, result = [], None
                while result is None:
                    message = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
                    if message.get("method") == "session/update":
                        updates.append(message["params"]["update"])
                    elif message.get("id") == 4:
                        result = message["result"]
        assert result["terminal"] == "completed"
        text = "".join(u["text"] for u in updates if u["kind"] == "agent_message_chunk")
        assert text == "over the websocket"
        assert updates[-1]["kind"] == "turn_end"


# -- print and stream-json runs attached -------------------------------------------------------


async def agentls_p(env: dict[str, str], cwd: Path, *args: str, stdin: bytes = b"") -> tuple:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", *args, env=env, cwd=cwd,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(stdin), WAIT_S)
    return proc.returncode, out.decode(), err.decode()


async def test_print_runs_attach_to_one_resident_server_with_their_own_key(
    tmp_path: Path, run_dir: Path
) -> None:
    with FakeModelServer(api_key="sk-print-user-key") as fake:
        workspace, env = home(tmp_path, "user", run_dir, OPENAI_API_KEY="sk-print-user-key")
        use_fake(workspace, fake)
        (workspace / "notes.txt").write_text("hello\n")
        fake.script(Reply(text="first"), Reply(text="second"), Reply(text="from stdin"))
        assert await agentls_p(env, workspace, "-p", "--connect", "one") == (0, "first\n", "")
        assert await agentls_p(env, workspace, "-p", "two", "--connect") == (0, "second\n", "")
        code, out, _ = await agentls_p(
            env, workspace, "-p", "--connect", "--output-format", "json", stdin=b"three"
        )
        assert code == 0 and json.loads(out)["result"] == "from stdin"
        assert len(resident_pids(run_dir)) == 1
        asked = [
            m["content"] for r in fake.requests for m in r.body["messages"] if m["role"] == "user"
        ]
        assert [a for a in asked if a in ("one", "two", "three")] == ["one", "two", "three"]

        wrong = {**env, "OPENAI_API_KEY": "sk-someone-else"}
        code, out, err = await agentls_p(wrong, workspace, "-p", "--connect", "four")
        assert (code, out) == (1, "")
        assert "401" in err and "sk-someone-else" not in err
        assert await agentls_p(env, workspace, "-p", "--connect", "--version") == (
            0, "agentls 0.1.0\n", "",
        )  # fmt: skip
        code, _, err = await agentls_p(env, workspace, "-p", "--connect", "--max-turns", "x")
        assert code == 2 and "invalid int value: 'x'" in err


async def test_a_signal_to_an_attached_print_run_aborts_its_turn(
    tmp_path: Path, run_dir: Path
) -> None:
    slow = HeldReply("too late")

    with FakeModelServer() as fake:
        workspace, env = home(tmp_path, "user", run_dir, OPENAI_API_KEY="sk-test-key-123")
        use_fake(workspace, fake)
        fake.script(slow, Reply(text="next run"))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.cli", "-p", "--connect", "--output-format",
            "stream-json", "--verbose", "wait", env=env, cwd=workspace, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            await wait_until(slow.asked.is_set, "the model call")
            proc.send_signal(signal.SIGINT)
            out, _ = await asyncio.wait_for(proc.communicate(), WAIT_S)
        finally:
            slow.held.set()
        assert proc.returncode == 130
        result = json.loads(out.splitlines()[-1])
        assert (result["type"], result["subtype"], result["terminal_reason"]) == (
            "result",
            "error_during_execution",
            "aborted_streaming",
        )
        assert await agentls_p(env, workspace, "-p", "--connect", "again") == (0, "next run\n", "")


async def test_the_claude_agent_sdk_attaches_through_the_user_config(
    tmp_path: Path, run_dir: Path
) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    from tests.test_streamjson_sdk import AGENTLS

    with FakeModelServer() as fake:
        workspace, env = home(tmp_path, "user", run_dir, OPENAI_API_KEY="sk-test-key-123")
        use_fake(workspace, fake)
        config = tmp_path / "user" / "config" / "agentls" / "config.json"
        config.write_text(
            json.dumps({**json.loads(config.read_text()), "server": {"connect": True}})
        )
        fake.script(Reply(text="attached answer"), Reply(text="second query"))
        opts = ClaudeAgentOptions(cli_path=AGENTLS, cwd=str(workspace), env=env)
        first = [m async for m in query(prompt="hi", options=opts)]
        [pid] = resident_pids(run_dir)
        second = [m async for m in query(prompt="again", options=opts)]
        assert resident_pids(run_dir) == [pid]
    results = [m for m in first + second if isinstance(m, ResultMessage)]
    assert [(r.subtype, r.result) for r in results] == [
        ("success", "attached answer"),
        ("success", "second query"),
    ]


# -- crash isolation -------------------------------------------------------------------------


async def test_a_crashing_engine_or_a_broken_client_never_touches_another_connection(
    tmp_path: Path, run_dir: Path
) -> None:
    slow = HeldReply("bob's answer")

    address = f"unix:{run_dir / 'team.sock'}"
    crash = f"{sys.executable} -c 'import os; os._exit(3)'"
    with FakeModelServer() as fake:
        ws_b, env_b = home(tmp_path, "bob", run_dir, OPENAI_API_KEY="sk-bob-key-123")
        ws_a = tmp_path / "alice-ws"
        ws_a.mkdir()
        env_a = {**env_b, "AGENTLS_PROVIDER": "scripted"}
        use_fake(ws_b, fake)
        config = tmp_path / "bob" / "config" / "agentls" / "config.json"
        config.write_text(
            json.dumps({**json.loads(config.read_text()), "server": {"allowEngineCommand": True}})
        )
        fake.script(slow)
        async with bridged(env_b, address) as bob:
            sid = await new_session(bob, ws_b)
            running = asyncio.ensure_future(finished(bob, sid, "take your time"))
            await wait_until(slow.asked.is_set, "bob's model call")
            [pid] = resident_pids(run_dir)
            async with bridged(env_a, address, "--engine-command", crash) as alice:
                with pytest.raises(Exception, match=r"exited|could not|cannot|failed"):
                    await alice.call("session/new", {"cwd": str(ws_a), "engine": "acp"})
                assert await new_session(alice, ws_a)  # her connection still serves
            _, writer = await asyncio.open_unix_connection(str(run_dir / "team.sock"))
            writer.write(b"Content-Length: 99999999999\r\n\r\n{garbage" + b"\xff" * 4096)
            await writer.drain()
            writer.close()
            slow.held.set()
            result = await running
        assert result["terminal"] == "completed"
        assert resident_pids(run_dir) == [pid]
        assert message_text(bob.updates) == "bob's answer"

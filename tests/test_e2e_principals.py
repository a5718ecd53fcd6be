"""Principals on the resident server (`agentls serve --listen`): a token maps to one principal
and its data dir, fixed by the server's owner; a connection can never lower the owner's sandbox
or permission mode nor run a command of its own choosing; a Unix peer in another namespace (a
sandboxed command) is refused; tokens are long; unauthenticated peers are bounded. Real
processes, real sockets."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_client import server_env
from tests.test_e2e_resident import WAIT_S, Raw, listening, request

pytestmark = pytest.mark.timeout(300)
OWNER_TOKEN = "owner-" + "a1" * 24
BOB_TOKEN = "bob-" + "b2" * 24
SERVE = [sys.executable, "-m", "server.cli", "serve"]


@pytest.fixture
def run_dir() -> Iterator[Path]:
    """A short private dir for sockets (their paths are limited to 107 characters)."""
    with tempfile.TemporaryDirectory(prefix="al-") as tmp:
        Path(tmp).chmod(0o700)
        yield Path(tmp)


def write_token(path: Path, token: str) -> Path:
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


def owner_env(tmp_path: Path, config: dict[str, Any] | None = None, **extra: str) -> dict:
    extra = {"AGENTLS_SANDBOX": "workspace-write", **extra}  # the suite's default is off
    env = server_env(tmp_path / "owner", AGENTLS_PROVIDER="scripted", **extra)
    user_config = tmp_path / "owner" / "config" / "agentls" / "config.json"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(json.dumps(config or {}))
    return env


async def unix_raw(address: str) -> Raw:
    return Raw(*await asyncio.open_unix_connection(address.removeprefix("unix:")))


async def attach(raw: Raw, **params: Any) -> dict[str, Any]:
    raw.send(request(1, "connection/attach", params))
    answer = await raw.read()
    assert answer is not None
    return answer


async def call(raw: Raw, msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    raw.send(request(msg_id, method, params))
    while True:
        answer = await raw.read()
        assert answer is not None, f"closed while waiting for {method}"
        if answer.get("id") == msg_id and "method" not in answer:
            return answer


async def ready(raw: Raw) -> None:
    answer = await call(raw, 2, "initialize", {"processId": None, "capabilities": {}})
    assert "result" in answer, answer
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})


# -- data dirs -------------------------------------------------------------------------------


async def test_a_principal_never_reaches_another_principals_data_dir(tmp_path: Path) -> None:
    bob_home = tmp_path / "bob-data"
    owner_token = write_token(tmp_path / "owner.token", OWNER_TOKEN)
    bob_token = write_token(tmp_path / "bob.token", BOB_TOKEN)
    config = {
        "server": {"principals": {"bob": {"tokenFile": str(bob_token), "home": str(bob_home)}}}
    }
    env = owner_env(tmp_path, config)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    owner_data = env["AGENTLS_HOME"]
    async with listening(env, "tcp://127.0.0.1:0", "--token-file", str(owner_token)) as (
        address,
        _,
    ):
        owner = await Raw.tcp(address)
        assert "result" in await attach(owner, token=OWNER_TOKEN)
        await ready(owner)
        created = await call(owner, 3, "session/new", {"cwd": str(workspace)})
        sid = created["result"]["sessionId"]
        said = "the vault code is hunter2-7731"
        turn = await call(
            owner,
            4,
            "session/prompt",
            {"sessionId": sid, "prompt": [{"type": "text", "text": said}]},
        )
        assert turn["result"]["terminal"] == "completed"

        thief = await Raw.tcp(address)
        refused = await attach(thief, token=BOB_TOKEN, env={"AGENTLS_HOME": owner_data})
        assert refused["error"]["code"] == -31005
        assert "data dir" in refused["error"]["message"]
        assert await thief.closed()

        bob = await Raw.tcp(address)
        assert "result" in await attach(bob, token=BOB_TOKEN, env={"PATH": os.environ["PATH"]})
        await ready(bob)
        listed = await call(bob, 3, "session/list", {})
        found = await call(bob, 4, "session/search", {"query": "hunter2"})
        loaded = await call(bob, 5, "session/load", {"sessionId": sid})
        bob.writer.close()
        owner.writer.close()
    assert listed["result"]["data"] == []
    assert "hunter2" not in json.dumps(found)
    assert loaded["error"]["code"] == -31001
    assert (bob_home / "sessions.db").exists() or any(bob_home.iterdir())


# -- the owner's floor -----------------------------------------------------------------------


FLOOR_BREAKERS = [
    pytest.param({"argv": ["--sandbox", "off"]}, "sandbox", id="argv-sandbox-off"),
    pytest.param(
        {"argv": ["--permission-mode", "bypassPermissions"]}, "permission mode", id="argv-bypass"
    ),
    pytest.param({"env": {"AGENTLS_SANDBOX": "off"}}, "sandbox", id="env-sandbox-off"),
    pytest.param(
        {"env": {"AGENTLS_PERMISSION_MODE": "bypassPermissions"}},
        "permission mode",
        id="env-bypass",
    ),
]


@pytest.mark.parametrize(("params", "named"), FLOOR_BREAKERS)
async def test_attach_cannot_lower_the_owners_sandbox_or_permission_mode(
    tmp_path: Path, run_dir: Path, params: dict[str, Any], named: str
) -> None:
    env = owner_env(tmp_path)
    if "env" in params:
        params = {"env": {**env, **params["env"]}}
    async with listening(env, f"unix:{run_dir / 's.sock'}") as (address, _):
        raw = await unix_raw(address)
        refused = await attach(raw, **params)
        assert refused["error"]["code"] == -31005, refused
        assert named in refused["error"]["message"] and "owner" in refused["error"]["message"]
        assert await raw.closed()


async def test_attach_cannot_pass_an_engine_command_unless_the_owner_allows_it(
    tmp_path: Path, run_dir: Path
) -> None:
    marker = tmp_path / "ran"
    command = f"sh -c 'touch {marker}'"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = owner_env(tmp_path)
    async with listening(env, f"unix:{run_dir / 's.sock'}") as (address, _):
        for params in (
            {"argv": ["--engine", "acp", "--engine-command", command]},
            {"env": {**env, "AGENTLS_ENGINE_COMMAND": command}, "argv": ["--engine", "acp"]},
        ):
            raw = await unix_raw(address)
            refused = await attach(raw, **params)
            assert refused["error"]["code"] == -31005, refused
            assert "engine command" in refused["error"]["message"]
            assert await raw.closed()
        stdio_flag = json.dumps({"mcpServers": {"s": {"command": "sh", "args": ["-c", "true"]}}})
        raw = await unix_raw(address)
        refused = await attach(raw, argv=["--mcp-config", stdio_flag], door="print")
        assert "MCP" in refused["error"]["message"], refused
        http = {"mcpServers": {"web": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}
        raw = await unix_raw(address)
        assert "result" in await attach(raw, argv=["--mcp-config", json.dumps(http)], door="print")
        raw.writer.close()
        raw = await unix_raw(address)
        assert "result" in await attach(raw, env=env)
        await ready(raw)
        stdio = {"demo": {"command": "sh", "args": ["-c", f"touch {marker}"]}}
        new = await call(raw, 3, "session/new", {"cwd": str(workspace), "mcpServers": stdio})
        assert new["error"]["code"] == -32602 and "owner" in new["error"]["message"]
        raw.writer.close()
    assert not marker.exists()

    allowed = owner_env(tmp_path, {"server": {"allowEngineCommand": True}})
    async with listening(allowed, f"unix:{run_dir / 's.sock'}") as (address, _):
        raw = await unix_raw(address)
        answer = await attach(raw, argv=["--engine", "acp", "--engine-command", command])
        assert "result" in answer, answer
        await ready(raw)
        await call(raw, 3, "session/new", {"cwd": str(workspace)})
        raw.writer.close()
    assert marker.exists()


async def test_session_requests_cannot_lower_the_owners_floor(
    tmp_path: Path, run_dir: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = owner_env(tmp_path)
    async with listening(env, f"unix:{run_dir / 's.sock'}") as (address, _):
        raw = await unix_raw(address)
        assert "result" in await attach(raw, env=env)
        await ready(raw)
        off = await call(raw, 3, "session/new", {"cwd": str(workspace), "sandbox": "off"})
        bypass = await call(
            raw, 4, "session/new", {"cwd": str(workspace), "mode": "bypassPermissions"}
        )
        sid = (await call(raw, 5, "session/new", {"cwd": str(workspace)}))["result"]["sessionId"]
        switched = await call(
            raw, 6, "session/set_mode", {"sessionId": sid, "modeId": "bypassPermissions"}
        )
        stricter = await call(raw, 7, "session/set_mode", {"sessionId": sid, "modeId": "plan"})
        raw.writer.close()
    for answer in (off, bypass, switched):
        assert answer["error"]["code"] == -32602, answer
        assert "owner" in answer["error"]["message"]
    assert "result" in stricter


# -- namespaces ------------------------------------------------------------------------------

PEER = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "connection/attach",
    "params": {"argv": ["--sandbox", "off", "--permission-mode", "bypassPermissions"]}}).encode()
try:
    s.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
except OSError:
    pass
s.settimeout(60)
data = b""
while chunk := s.recv(65536):
    data += chunk
    head, _, body = data.partition(b"\\r\\n\\r\\n")
    if _ and len(body) >= int(head.split(b":")[1]):
        break
print(data.decode())
"""


def bwrap_runs() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--unshare-user", "true"]
    return subprocess.run(probe, capture_output=True, timeout=WAIT_S).returncode == 0


@pytest.mark.skipif(not bwrap_runs(), reason="needs bubblewrap with user namespaces")
async def test_a_unix_peer_in_another_namespace_is_refused(tmp_path: Path, run_dir: Path) -> None:
    env = owner_env(tmp_path, {"server": {"allowEngineCommand": True}})
    sandbox = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    async with listening(env, f"unix:{run_dir / 's.sock'}") as (address, _):
        for unshare in (["--unshare-user"], ["--unshare-pid"], []):
            peer = subprocess.run(
                [*sandbox, *unshare, sys.executable, "-c", PEER, address.removeprefix("unix:")],
                capture_output=True,
                timeout=WAIT_S,
            )
            out = peer.stdout.decode()
            assert '"result"' not in out, (unshare, out)
            assert "namespace" in out, (unshare, out, peer.stderr.decode())


# -- tokens ----------------------------------------------------------------------------------


async def test_new_token_writes_a_long_private_token_and_short_ones_are_refused(
    tmp_path: Path,
) -> None:
    env = server_env(tmp_path)
    path = tmp_path / "made.token"
    made = subprocess.run(
        [*SERVE, "--new-token", str(path)],
        env=env,
        capture_output=True,
        timeout=WAIT_S,
    )
    assert made.returncode == 0, made.stderr
    token = path.read_text().strip()
    assert path.stat().st_mode & 0o777 == 0o600 and len(token) >= 43
    async with listening(env, "tcp://127.0.0.1:0", "--token-file", str(path)) as (address, _):
        raw = await Raw.tcp(address)
        assert "result" in await attach(raw, token=token)
        raw.writer.close()

    short = write_token(tmp_path / "short.token", "x")
    proc = subprocess.run(
        [*SERVE, "--listen", "tcp://127.0.0.1:0", "--token-file", str(short)],
        env=env,
        capture_output=True,
        timeout=WAIT_S,
    )
    assert proc.returncode == 1
    assert b"too short" in proc.stderr and b"--new-token" in proc.stderr


# -- before authentication -------------------------------------------------------------------


async def test_an_unauthenticated_peer_is_bounded_in_bytes_and_time(tmp_path: Path) -> None:
    token = write_token(tmp_path / "owner.token", OWNER_TOKEN)
    env = server_env(tmp_path)
    async with listening(env, "tcp://127.0.0.1:0", "--token-file", str(token)) as (address, _):
        big = await Raw.tcp(address)
        big.writer.write(b"Content-Length: 60000000\r\n\r\n")
        try:
            for _ in range(16):
                big.writer.write(b"x" * 65536)
                await asyncio.wait_for(big.writer.drain(), WAIT_S)
        except (ConnectionError, OSError):
            pass
        answer = await big.read()
        assert answer is not None and answer["error"]["code"] == -31005
        assert "64 KB" in answer["error"]["message"]

        silent = await Raw.tcp(address)
        answer = await silent.read()
        assert answer is not None and "in time" in answer["error"]["message"]
        assert await silent.closed()


async def test_another_principal_cannot_add_allow_rules_or_trust_a_folder(tmp_path: Path) -> None:
    owner_token = write_token(tmp_path / "owner.token", OWNER_TOKEN)
    bob_token = write_token(tmp_path / "bob.token", BOB_TOKEN)
    entry = {"tokenFile": str(bob_token), "home": str(tmp_path / "bob-data")}
    env = owner_env(tmp_path, {"server": {"principals": {"bob": entry}}})
    async with listening(env, "tcp://127.0.0.1:0", "--token-file", str(owner_token)) as (
        address,
        _,
    ):
        for argv, named in ((["--allowedTools", "Bash"], "allow rule"), (["--trust"], "trust")):
            raw = await Raw.tcp(address)
            refused = await attach(raw, token=BOB_TOKEN, argv=argv, door="print")
            assert refused["error"]["code"] == -31005, (argv, refused)
            assert named in refused["error"]["message"], refused
        raw = await Raw.tcp(address)
        assert "result" in await attach(raw, token=BOB_TOKEN, door="print"), "bob without them"
        raw = await Raw.tcp(address)
        assert "result" in await attach(raw, token=BOB_TOKEN)
        await ready(raw)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        trusted = {"cwd": str(workspace), "workspaceTrusted": True}
        answer = await call(raw, 3, "session/new", trusted)
        raw.writer.close()
        raw = await Raw.tcp(address)
        assert "result" in await attach(raw, token=OWNER_TOKEN, argv=["--trust"])
        raw.writer.close()
    assert answer["error"]["code"] == -32602 and "trust" in answer["error"]["message"], answer


async def test_an_attached_print_run_cannot_raise_the_permission_mode(tmp_path: Path) -> None:
    owner_token = write_token(tmp_path / "owner.token", OWNER_TOKEN)
    env = owner_env(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    raise_mode = {"subtype": "set_permission_mode", "mode": "bypassPermissions"}
    lines = [
        {"type": "control_request", "request_id": "up", "request": raise_mode},
        {
            "type": "control_request",
            "request_id": "plan",
            "request": {**raise_mode, "mode": "plan"},
        },
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines).encode()
    async with listening(env, "tcp://127.0.0.1:0", "--token-file", str(owner_token)) as (
        address,
        _,
    ):
        run = subprocess.run(
            [sys.executable, "-m", "server.cli", "-p", "--input-format", "stream-json",
             "--output-format", "stream-json", "--verbose", "--connect", address,
             "--token-file", str(owner_token)],
            input=stdin, cwd=workspace, env=env, capture_output=True, timeout=WAIT_S,
        )  # fmt: skip
    answers = {
        frame["response"]["request_id"]: frame["response"]
        for frame in map(json.loads, run.stdout.decode().splitlines())
        if frame.get("type") == "control_response"
    }
    assert answers["up"]["subtype"] == "error", (answers, run.stderr)
    assert "owner" in answers["up"]["error"]
    assert answers["plan"]["subtype"] == "success"

"""The command sandbox (bubblewrap) through `agentls serve` over real stdio: what a sandboxed
command can and cannot touch, when it runs without asking, and what a repository cannot loosen.
A canary HTTP server on 127.0.0.1 counts the connections that get through."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from server.testing.fake_llm import FakeToolCall
from server.tools.sandbox import probe
from tests.agent_client import AgentClient, server_env
from tests.trust_fixture import bash, clone, serve_turn

needs_bwrap = pytest.mark.skipif(not probe().available, reason=f"no sandbox: {probe().reason}")
SANDBOXED = {"sandbox": "workspace-write"}


class Canary:
    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"canary\n")

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.host = f"127.0.0.1:{self.port}"
        """The canary as `sandbox.network` lists it: the address with its port."""
        self.url = f"http://{self.host}/hit"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def canary() -> Iterator[Canary]:
    c = Canary()
    yield c
    c.server.shutdown()


def outputs(turn) -> list[str]:
    return [
        u["output"]
        for u in turn.updates("tool_call_update")
        if u.get("output") and u["status"] != "in_progress"  # live output of a running command
    ]


@needs_bwrap
async def test_a_sandboxed_command_writes_the_workspace_and_nothing_outside(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm)
    outside = tmp_path / "outside.txt"
    outside.write_text("one\n")
    command = f"echo in > inside.txt && echo two | tee -a {outside}"
    turn = await serve_turn(tmp_path, workspace, fake_llm, [bash(command)], new=SANDBOXED)
    assert turn.requests == [], "a command that stays inside runs without asking"
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert outside.read_text() == "one\n"
    (output,) = outputs(turn)
    assert "Read-only file system" in output and '"sandboxBlocked": "write"' in output
    assert "outside_sandbox" in output, "the model is told how to ask for the way out"


@needs_bwrap
async def test_git_and_control_files_stay_read_only_inside(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / ".mcp.json").write_text("{}")
    # A repository's own script, as a build step might run it.
    (workspace / "setup.sh").write_text(
        "echo x | tee -a .git/config .mcp.json .agentls/config.json\n"
        "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit\necho done\n"
    )
    turn = await serve_turn(tmp_path, workspace, fake_llm, [bash("bash setup.sh")], new=SANDBOXED)
    assert turn.requests == []
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    assert (workspace / ".mcp.json").read_text() == "{}"
    assert (workspace / ".agentls" / "config.json").read_text().endswith("}")


@needs_bwrap
async def test_the_network_is_off_inside_unless_configured(tmp_path, workspace, fake_llm, canary):
    clone(workspace, fake_llm)
    command = f"curl -s --max-time 5 {canary.url} || echo unreachable"
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(command)], new={**SANDBOXED, "mode": "bypassPermissions"}
    )
    assert turn.statuses() == ["completed"]
    assert canary.hits == []
    assert "unreachable" in outputs(turn)[0]

    clone(workspace, fake_llm, user={"sandbox": {"network": True}})
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(command)], new={**SANDBOXED, "mode": "bypassPermissions"}
    )
    assert canary.hits == ["/hit"]
    assert "canary" in outputs(turn)[0]


@needs_bwrap
async def test_a_refused_host_is_flagged_when_the_command_hides_the_proxys_answer(
    tmp_path, workspace, fake_llm, canary
):
    clone(workspace, fake_llm, user={"sandbox": {"network": [canary.host]}})
    denied = canary.url.replace("127.0.0.1", "localhost") + "-denied"
    # -f: curl prints only "The requested URL returned error: 403", never the proxy's words
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(f"curl -sf --max-time 10 {denied}", "c_f")], new=SANDBOXED
    )
    [out] = outputs(turn)
    assert '"exitCode": 22' in out
    assert '"sandboxBlocked": "network"' in out
    assert "localhost" in out  # the hint names the refused host
    assert canary.hits == []


@needs_bwrap
async def test_a_list_of_hosts_lets_commands_reach_those_alone_through_the_proxy(
    tmp_path, workspace, fake_llm, canary
):
    clone(workspace, fake_llm, user={"sandbox": {"network": [canary.host]}})
    denied = canary.url.replace("127.0.0.1", "localhost") + "-denied"
    calls = [
        bash(f"curl -s --max-time 10 {canary.url}", "c_http"),
        bash(f"curl -s --max-time 10 --proxytunnel {canary.url}-tunnel", "c_tunnel"),
        bash(f"curl -sf --max-time 10 {denied} || echo refused", "c_denied"),
        bash(f"curl -s --max-time 10 {denied}", "c_said"),
    ]
    turn = await serve_turn(tmp_path, workspace, fake_llm, calls, new=SANDBOXED)
    assert turn.requests == [], "curl to listed hosts stays inside the sandbox: no request"
    assert canary.hits == ["/hit", "/hit-tunnel"]
    http, tunnel, refused, said = outputs(turn)
    assert "canary" in http and "canary" in tunnel
    assert "refused" in refused
    assert f"localhost:{canary.port} is not in sandbox.network (allowed: {canary.host})" in said

    client = AgentClient()
    await client.start(server_env(tmp_path, OPENAI_API_KEY="k", AGENTLS_SANDBOX="workspace-write"))
    try:
        init = await client.initialize()
    finally:
        await client.close()
    status = init.capabilities.experimental["agentls"]["sandbox"]
    assert status["allowedHosts"] == [canary.host] and status["network"] is False


@needs_bwrap
async def test_a_repository_cannot_add_hosts_the_user_does_not_allow(
    tmp_path, workspace, fake_llm, canary
):
    clone(workspace, fake_llm, project={"sandbox": {"network": [canary.host]}})
    command = f"curl -s --max-time 5 {canary.url} || echo unreachable"
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(command)], new={**SANDBOXED, "mode": "bypassPermissions"}
    )
    assert canary.hits == []
    assert "unreachable" in outputs(turn)[0]
    (notice,) = turn.updates("workspace_trust")
    assert "sandbox.network (hosts the user does not allow)" in notice["ignored"]

    clone(
        workspace,
        fake_llm,
        project={"sandbox": {"network": [canary.host]}},
        user={"sandbox": {"network": [canary.host, "example.com"]}},
    )
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(command)], new={**SANDBOXED, "mode": "bypassPermissions"}
    )
    assert canary.hits == ["/hit"], "a list within the user's narrows it, and is kept"


async def test_a_bad_host_in_the_list_is_a_clear_error(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, user={"sandbox": {"network": ["https://pypi.org/simple"]}})
    client = AgentClient()
    await client.start(server_env(tmp_path, OPENAI_API_KEY="k"))
    try:
        await client.initialize()
        with pytest.raises(Exception) as refused:
            await client.call("session/new", {"cwd": str(workspace), **SANDBOXED})
    finally:
        await client.close()
    assert "sandbox.network hosts are names like example.com" in str(refused.value)


@needs_bwrap
async def test_a_command_that_needs_the_network_asks_and_runs_outside_when_allowed(
    tmp_path, workspace, fake_llm, canary
):
    clone(workspace, fake_llm)
    command = f"curl -s --max-time 5 {canary.url}"
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(command)], new=SANDBOXED, answers=("allow_once",)
    )
    (request,) = turn.requests
    reason = request["toolCall"]["reason"]
    assert "needs the network" in reason and "outside the sandbox" in reason
    assert canary.hits == ["/hit"]


@needs_bwrap
async def test_auto_allow_off_asks_for_every_command(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, user={"sandbox": {"autoAllow": False}})
    turn = await serve_turn(tmp_path, workspace, fake_llm, [bash("echo hi > a.txt")], new=SANDBOXED)
    assert len(turn.requests) == 1
    assert turn.statuses() == ["denied"]
    assert not (workspace / "a.txt").exists()


@needs_bwrap
async def test_outside_sandbox_asks_and_then_runs_on_the_machine(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    outside = tmp_path / "outside.txt"
    call = FakeToolCall(
        "bash", {"command": f"echo two | tee -a {outside}", "outside_sandbox": True}, id="c1"
    )
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [call], new=SANDBOXED, answers=("allow_once",)
    )
    (request,) = turn.requests
    assert "outside the sandbox" in request["toolCall"]["reason"]
    assert outside.read_text() == "two\n"


@needs_bwrap
async def test_a_repository_cannot_loosen_the_sandbox(tmp_path, workspace, fake_llm, canary):
    clone(
        workspace,
        fake_llm,
        project={"sandbox": {"mode": "off", "network": True}},
        user={"trustedProjects": [str(workspace)]},
    )
    outside = tmp_path / "outside.txt"
    command = f"echo two | tee -a {outside}; python3 -c \"import urllib.request as u; u.urlopen('{canary.url}')\""
    turn = await serve_turn(tmp_path, workspace, fake_llm, [bash(command)], new=SANDBOXED)
    assert not outside.exists() and canary.hits == []
    assert turn.requests == []


@needs_bwrap
async def test_a_repository_may_make_it_stricter(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, project={"sandbox": "read-only"})
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash("echo in > inside.txt")], new=SANDBOXED
    )
    assert not (workspace / "inside.txt").exists()
    assert "read-only" in (turn.requests[0]["toolCall"]["reason"] if turn.requests else "")


@needs_bwrap
async def test_background_jobs_run_in_the_sandbox(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm)
    outside = tmp_path / "outside.txt"
    start = FakeToolCall(
        "bash",
        {"command": f"echo two | tee -a {outside}; echo finished > done.txt", "run_in_background": True},
        id="c1",
    )
    # Waits for the job's own mark, at most a minute.
    wait = bash("for i in $(seq 600); do [ -f done.txt ] && break; sleep 0.1; done", "c2")
    output = FakeToolCall("bash_output", {"jobId": "bash_1"}, id="c3")
    turn = await serve_turn(tmp_path, workspace, fake_llm, [start, wait, output], new=SANDBOXED)
    assert turn.requests == []
    assert (workspace / "done.txt").exists()
    assert not outside.exists()
    assert "Read-only file system" in outputs(turn)[-1]


@needs_bwrap
async def test_git_tool_writes_work_in_the_sandbox(tmp_path, workspace, fake_llm):
    import subprocess

    clone(workspace, fake_llm)
    (workspace / ".git").rmdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.txt").write_text("a\n")
    add = FakeToolCall("git", {"args": ["add", "a.txt"]}, id="c1")
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [add], new=SANDBOXED, answers=("allow_once",)
    )
    assert turn.statuses() == ["completed"]
    staged = subprocess.run(
        ["git", "-C", str(workspace), "diff", "--cached", "--name-only"],
        capture_output=True,
        text=True,
    )
    assert staged.stdout.split() == ["a.txt"]


async def initialize_with(tmp_path, **env: str) -> dict:
    client = AgentClient()
    base = server_env(tmp_path)
    base.pop("AGENTLS_SANDBOX", None)
    await client.start({**base, **env})
    try:
        result = await client.initialize()
    finally:
        await client.close()
    return result.capabilities.experimental["agentls"]["sandbox"]


@needs_bwrap
async def test_initialize_shows_the_default_sandbox(tmp_path):
    status = await initialize_with(tmp_path)
    assert status["mode"] == "workspace-write" and status["kind"] == "bwrap"
    assert status["network"] is False and status["autoAllow"] is True


async def test_without_bubblewrap_commands_run_unsandboxed_and_say_why(
    tmp_path, workspace, fake_llm
):
    status = await initialize_with(tmp_path, AGENTLS_BWRAP="")
    assert status["mode"] == "off" and status["configured"] == "workspace-write"
    assert "bubblewrap" in status["notice"]


@needs_bwrap
async def test_a_repository_may_hide_more_but_never_less(tmp_path, workspace, fake_llm):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "private.txt").write_text("mine")
    (tmp_path / "shared.txt").write_text("shared")
    clone(
        workspace,
        fake_llm,
        project={"sandbox": {"denyRead": [str(tmp_path / "shared.txt")]}},
        user={"sandbox": {"denyRead": ["~/notes"]}},
    )
    (workspace / "peek.py").write_text(
        "import pathlib\n"
        f"for name in {[str(tmp_path / 'notes' / 'private.txt'), str(tmp_path / 'shared.txt')]!r}:\n"
        "    try:\n"
        "        print(pathlib.Path(name).read_text())\n"
        "    except OSError as exc:\n"
        "        print('unreadable', exc.strerror)\n"
    )
    turn = await serve_turn(tmp_path, workspace, fake_llm, [bash("python3 peek.py")], new=SANDBOXED)
    assert turn.requests == []
    [out] = outputs(turn)
    assert "mine" not in out and "shared" not in out and out.count("unreadable") == 2

"""MCP servers through every front door: real agentls processes, real MCP servers written with
the `mcp` SDK (tests/mcp_servers), the loopback fake model or the scripted one."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import acp
from acp import schema

from server.providers.openai import TOOL_IMAGES
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env, use_fake_model
from tests.mcp_servers import (
    DEMO,
    alive,
    demo_entry,
    notes_http_server,
    pids,
    wait_dead,
    wait_for_file,
)

TOKEN = "s3cret"
PIXEL_TEXT = "[image: image/png, 70 bytes]"
PIXEL_URL = (  # the demo server's 1x1 PNG
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
LOOKUP_TEXT = "mcp: Model Context Protocol\n[resource: glossary://mcp]\nModel Context Protocol"


def configure(tmp_path: Path, workspace: Path, fake_llm, user: dict, project: dict | None = None):
    """The fake model (its URL in the user config) plus `user` merged into the user config."""
    use_fake_model(workspace, fake_llm, **(project or {}))
    path = tmp_path / "config" / "agentls" / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **user}))


def prompt(session_id: str, text: str) -> dict:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def tool_messages(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def pixel_urls(body: dict) -> list[str]:
    """The image URLs of the user messages that follow tool messages."""
    urls = []
    for before, message in zip(body["messages"], body["messages"][1:], strict=False):
        images = isinstance(message["content"], list)  # not a prompt after a cancelled call
        if before["role"] == "tool" and message["role"] == "user" and images:
            assert message["content"][0] == {"type": "text", "text": TOOL_IMAGES}
            urls += [p["image_url"]["url"] for p in message["content"][1:]]
    return urls


def mcp_notes(updates: list[dict]) -> list[dict]:
    return [u["update"] for u in updates if u["update"]["kind"] == "mcp_status"]


async def test_jsonrpc_tools_permissions_listing_and_shutdown(tmp_path, workspace, fake_llm):
    state = tmp_path / "state"
    state.mkdir()
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tracker": demo_entry(tmp_path / "never")}})
    )
    configure(
        tmp_path,
        workspace,
        fake_llm,
        # The project's allow rule counts because the user trusts the folder (its MCP servers
        # still need `mcp.trustedProjects`).
        {"mcpServers": {"demo": demo_entry(state)}, "trustedProjects": [str(workspace)]},
        project={"permissions": {"allow": ["mcp__notes"]}},
    )
    fake_llm.script(
        Reply(
            tool_calls=[
                FakeToolCall("mcp__demo__pixel", {}, id="call_px"),
                FakeToolCall("mcp__notes__lookup", {"word": "mcp"}, id="call_lk"),
            ]
        ),
        Reply(text="A pixel and a definition."),
        Reply(tool_calls=[FakeToolCall("mcp__demo__pixel", {}, id="call_px2")]),
        Reply(text="Again."),
    )
    client = AgentClient()
    client.on_permission = lambda p: {
        "outcome": {"outcome": "selected", "optionId": "allow_always"}
    }
    with notes_http_server(TOKEN) as url:
        await client.start(server_env(tmp_path, OPENAI_API_KEY="test-key"))
        try:
            init = await client.initialize()
            assert "mcp" in init.capabilities.experimental["agentls"]["features"]
            before = await client.call("mcp/list", {"cwd": str(workspace)})
            notes = {"type": "http", "url": url, "headers": {"x-demo-token": TOKEN}}
            session = await client.call(
                "session/new", {"cwd": str(workspace), "mcpServers": {"notes": notes}}
            )
            sid = session["sessionId"]
            listing = await client.call("mcp/list", {"sessionId": sid})
            first = await client.call("session/prompt", prompt(sid, "show me"))
            second = await client.call("session/prompt", prompt(sid, "again"))
            (pid,) = pids(state)
            assert alive(pid)
            await client.call("session/close", {"sessionId": sid})
            assert await wait_dead(pid)
        finally:
            await client.close()

    assert [(s["name"], s["status"], s["source"]) for s in before["servers"]] == [
        ("demo", "configured", "user"),
        ("tracker", "untrusted", "project"),
    ]
    demo, notes_info, tracker = listing["servers"]
    assert demo == {
        "name": "demo",
        "transport": "stdio",
        "source": "user",
        "status": "connected",
        "serverInfo": {"name": "demo", "version": "1.2.3"},
        "tools": [
            {
                "name": "mcp__demo__slow",
                "tool": "slow",
                "title": "slow",
                "description": demo["tools"][0]["description"],
            },
            {
                "name": "mcp__demo__pixel",
                "tool": "pixel",
                "title": "One pixel",
                "description": "A 1x1 PNG image.",
            },
        ],
    }
    assert (notes_info["transport"], notes_info["source"], notes_info["status"]) == (
        "http",
        "client",
        "connected",
    )
    assert [t["name"] for t in notes_info["tools"]] == ["mcp__notes__lookup"]
    assert (tracker["status"], tracker["tools"]) == ("untrusted", [])
    assert not (tmp_path / "never").exists()

    assert (first["terminal"], second["terminal"]) == ("completed", "completed")
    specs = {t["function"]["name"]: t["function"] for t in fake_llm.requests[0].body["tools"]}
    assert specs["mcp__demo__slow"]["parameters"]["properties"]["seconds"] == {
        "default": 30.0,
        "title": "Seconds",
        "type": "number",
    }
    assert "mcp__notes__lookup" in specs and "mcp__tracker__slow" not in specs
    assert tool_messages(fake_llm.requests[1].body) == [PIXEL_TEXT, LOOKUP_TEXT]
    assert tool_messages(fake_llm.requests[3].body)[-1] == PIXEL_TEXT
    # the image itself reaches the model right after its step's tool messages, in every later call
    urls = [pixel_urls(r.body) for r in fake_llm.requests]
    assert urls == [[], [PIXEL_URL], [PIXEL_URL], [PIXEL_URL] * 2]

    # notes is allowed by the config; pixel asks once, then its allow-always rule holds
    assert [r["toolCall"]["title"] for r in client.permission_requests] == ["One pixel (demo)"]
    first_turn = [u for u in client.updates if u["turnId"] == first["turnId"]]
    assert mcp_notes(first_turn) == [
        {"kind": "mcp_status", "server": "demo", "status": "connected", "tools": 2},
        {
            "kind": "mcp_status",
            "server": "tracker",
            "status": "untrusted",
            "error": tracker["error"],
        },
        {"kind": "mcp_status", "server": "notes", "status": "connected", "tools": 1},
    ]
    calls = [u["update"] for u in first_turn if u["update"]["kind"] == "tool_call"]
    assert [(c["name"], c["title"], c["toolKind"]) for c in calls] == [
        ("mcp__demo__pixel", "One pixel (demo)", "other"),
        ("mcp__notes__lookup", "lookup (notes)", "other"),
    ]
    assert mcp_notes([u for u in client.updates if u["turnId"] == second["turnId"]]) == []


async def test_jsonrpc_cancel_crash_and_a_restart_on_the_next_call(tmp_path, workspace, fake_llm):
    state = tmp_path / "state"
    state.mkdir()
    configure(tmp_path, workspace, fake_llm, {"mcpServers": {"demo": demo_entry(state)}})
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("mcp__demo__slow", {"seconds": 60}, id="call_slow")]),
        Reply(tool_calls=[FakeToolCall("mcp__demo__slow", {"crash": True}, id="call_crash")]),
        Reply(text="The server crashed."),
        Reply(tool_calls=[FakeToolCall("mcp__demo__pixel", {}, id="call_again")]),
        Reply(text="It is back."),
    )
    client = AgentClient()
    await client.start(server_env(tmp_path, OPENAI_API_KEY="test-key"))
    try:
        await client.initialize()
        session = await client.call(
            "session/new", {"cwd": str(workspace), "mode": "bypassPermissions"}
        )
        sid = session["sessionId"]
        (pid,) = pids(state)
        running = asyncio.ensure_future(client.call("session/prompt", prompt(sid, "wait")))
        await wait_for_file(state / "slow-started")
        client.notify("session/cancel", {"sessionId": sid})
        aborted = await asyncio.wait_for(running, 60)
        await wait_for_file(state / "slow-cancelled")
        crashed = await client.call("session/prompt", prompt(sid, "crash it"))
        after = await client.call("session/prompt", prompt(sid, "and now?"))
        assert await wait_dead(pid)
        (restarted,) = [p for p in pids(state) if p != pid]
    finally:
        await client.close()
    assert await wait_dead(restarted)

    assert (aborted["terminal"], aborted["stopReason"]) == ("aborted", "cancelled")
    assert (crashed["terminal"], after["terminal"]) == ("completed", "completed")
    crash_turn = [u["update"] for u in client.updates if u["turnId"] == crashed["turnId"]]
    failed = [u for u in crash_turn if u["kind"] == "tool_call_update" and u["status"] == "failed"]
    assert [u["toolCallId"] for u in failed] == ["call_crash"]
    assert "is not running (failed: the server closed the connection" in failed[0]["error"]
    (note,) = mcp_notes([u for u in client.updates if u["turnId"] == crashed["turnId"]])
    assert (note["server"], note["status"]) == ("demo", "failed")
    assert "is not running" in tool_messages(fake_llm.requests[2].body)[-1]
    after_turn = [u for u in client.updates if u["turnId"] == after["turnId"]]
    assert [(n["server"], n["status"]) for n in mcp_notes(after_turn)] == [("demo", "connected")]
    done = [u["update"] for u in after_turn if u["update"]["kind"] == "tool_call_update"]
    assert [(u["toolCallId"], u["status"]) for u in done][-1] == ("call_again", "completed")
    assert len(pixel_urls(fake_llm.requests[4].body)) == 1


class Editor:
    """An ACP client that allows every tool call and records the updates."""

    def __init__(self) -> None:
        self.updates: list = []
        self.permissions: list = []

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(tool_call)
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id="allow_once")
        )


async def test_jsonrpc_session_load_takes_the_clients_servers_again(tmp_path, workspace, fake_llm):
    state = tmp_path / "state"
    state.mkdir()
    configure(tmp_path, workspace, fake_llm, {})
    fake_llm.script(
        Reply(text="Hello."),
        Reply(tool_calls=[FakeToolCall("mcp__demo__pixel", {}, id="call_px")]),
        Reply(text="A pixel."),
    )
    servers = {"demo": demo_entry(state)}
    client = AgentClient()
    await client.start(server_env(tmp_path, OPENAI_API_KEY="test-key"))
    try:
        await client.initialize()
        params = {"cwd": str(workspace), "mode": "bypassPermissions", "mcpServers": servers}
        sid = (await client.call("session/new", params))["sessionId"]
        await client.call("session/prompt", prompt(sid, "hi"))
        await client.call("session/close", {"sessionId": sid})
        bare = await client.call("session/load", {"sessionId": sid})
        without = await client.call("mcp/list", {"sessionId": sid})
        await client.call("session/close", {"sessionId": sid})
        await client.call("session/load", {"sessionId": sid, "mcpServers": servers})
        listing = await client.call("mcp/list", {"sessionId": sid})
        result = await client.call("session/prompt", prompt(sid, "a pixel please"))
    finally:
        await client.close()
    assert bare["sessionId"] == sid and without["servers"] == []
    [(name, source, status)] = [(s["name"], s["source"], s["status"]) for s in listing["servers"]]
    assert (name, source, status) == ("demo", "client", "connected")
    assert result["terminal"] == "completed", result
    assert tool_messages(fake_llm.requests[2].body)[-1] == PIXEL_TEXT
    assert len(pids(state)) == 2


async def test_acp_session_new_mcp_servers(tmp_path, workspace, fake_llm):
    state = tmp_path / "state"
    state.mkdir()
    fake_llm.script(
        Reply(
            tool_calls=[
                FakeToolCall("mcp__demo__slow", {"seconds": 0.01}, id="call_slow"),
                FakeToolCall("mcp__notes__lookup", {"word": "mcp"}, id="call_lk"),
            ]
        ),
        Reply(text="done"),
    )
    env = server_env(
        tmp_path,
        AGENTLS_PROVIDER="openai",
        AGENTLS_MODEL="gpt-5.5",
        AGENTLS_BASE_URL=fake_llm.openai_base_url,
        AGENTLS_MAX_RETRIES="0",
        OPENAI_API_KEY="k",
    )
    editor = Editor()
    stdio = schema.McpServerStdio(
        name="demo",
        command=sys.executable,
        args=[str(DEMO)],
        env=[schema.EnvVariable(name="DEMO_STATE_DIR", value=str(state))],
    )
    with notes_http_server(TOKEN) as url, (tmp_path / "acp.log").open("a") as log:
        http = schema.HttpMcpServer(
            type="http",
            name="notes",
            url=url,
            headers=[schema.HttpHeader(name="x-demo-token", value=TOKEN)],
        )
        async with acp.spawn_agent_process(
            editor,
            sys.executable,
            "-m",
            "server.cli",
            "acp",
            env=env,
            transport_kwargs={"stderr": log},
            use_unstable_protocol=True,
        ) as (conn, _proc):
            init = await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=schema.ClientCapabilities(),
                client_info=schema.Implementation(name="tests", version="0"),
            )
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[stdio, http])
            response = await conn.prompt(
                session_id=session.session_id,
                prompt=[schema.TextContentBlock(type="text", text="go")],
            )
            (pid,) = pids(state)
            await conn.close_session(session_id=session.session_id)
            assert await wait_dead(pid)

    assert init.agent_capabilities.mcp_capabilities.http
    assert response.stop_reason == "end_turn"
    assert [p.title for p in editor.permissions] == ["slow (demo)", "lookup (notes)"]
    done = [
        u.content[0].content.text
        for u in editor.updates
        if u.session_update == "tool_call_update" and u.status == "completed"
    ]
    assert done == ["slept 0.01 s", LOOKUP_TEXT]


def test_stream_json_mcp_config(tmp_path, workspace):
    state = tmp_path / "state"
    state.mkdir()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"toolCalls": [{"name": "mcp__demo__pixel", "arguments": {}}]},
                {"text": "one pixel"},
            ]
        )
    )
    env = server_env(tmp_path, AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script))
    config = json.dumps({"mcpServers": {"demo": demo_entry(state)}})
    lines = [
        {"type": "control_request", "request_id": "r1", "request": {"subtype": "mcp_status"}},
        {"type": "user", "message": {"role": "user", "content": "show"}, "session_id": ""},
    ]
    flags = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    flags += ["--allowedTools", "mcp__demo", "--mcp-config", config]
    proc = subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", *flags],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        cwd=workspace,
        env=env,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    frames = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    status = frames[0]["response"]["response"]["mcpServers"]
    assert status == [
        {
            "name": "demo",
            "status": "connected",
            "serverInfo": {"name": "demo", "version": "1.2.3"},
            "scope": "user",
            "tools": [
                {"name": "slow", "description": status[0]["tools"][0]["description"]},
                {"name": "pixel", "description": "A 1x1 PNG image."},
            ],
        }
    ]
    init = next(f for f in frames if f.get("subtype") == "init")
    assert init["mcp_servers"] == [{"name": "demo", "status": "connected"}]
    assert {"mcp__demo__slow", "mcp__demo__pixel"} <= set(init["tools"])
    results = [
        block
        for f in frames
        if f["type"] == "user"
        for block in f["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert [(r["content"], r.get("is_error", False)) for r in results] == [(PIXEL_TEXT, False)]
    assert frames[-1]["subtype"] == "success"
    assert [alive(pid) for pid in pids(state)] == [False]


def test_stream_json_rejects_a_bad_mcp_config(tmp_path, workspace):
    proc = subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", "hi", "--mcp-config", '{"servers": 1}'],
        capture_output=True,
        cwd=workspace,
        env=server_env(tmp_path, AGENTLS_PROVIDER="scripted"),
        timeout=60,
    )
    assert proc.returncode == 1
    assert b'expected {"mcpServers": {...}}' in proc.stderr

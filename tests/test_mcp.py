"""MCP as a tool source, below the front doors: configuration and trust, the tool adapter, and
connections to real MCP servers (tests/mcp_servers) started through the pool."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import anyio
import mcp_types as types
import pytest
from pydantic import ValidationError

from server.config import load_config
from server.mcp.config import ServerConfig, from_acp, from_mcp_config, session_servers
from server.mcp.pool import McpPool
from server.mcp.session import MAX_RESTARTS, McpSessionServers, covered_tools
from server.mcp.tools import McpTool, input_model, to_result, tool_name
from server.providers import codec, images
from server.providers.messages import ImagePart, Message, ToolCallPart, ToolResultPart
from server.tools.base import ToolContext, ToolError
from tests.mcp_servers import alive, demo_entry, pids, wait_dead, wait_for_file

# -- configuration ------------------------------------------------------------------------


def test_entries_of_every_shape(tmp_path):
    config = {
        "mcp": {"toolTimeout": 5},
        "mcpServers": {
            "db": {"command": "db-mcp", "args": ["--ro"], "env": {"TOKEN": "${DB_TOKEN}"}},
            "web": {
                "type": "http",
                "url": "https://${HOST:-mcp.example.com}/mcp",
                "headers": {"Authorization": "Bearer ${WEB_KEY}"},
                "startupTimeout": 3,
            },
            "old": {"type": "sse", "url": "https://example.com/sse"},
            "off": {"command": "x", "disabled": True},
            "bad": {"command": "x", "args": "not a list"},
            "unset": {"command": "${NOPE}/bin/server"},
        },
    }
    environ = {"DB_TOKEN": "t0k", "WEB_KEY": "k3y"}
    got = {s.name: s for s in session_servers(config, tmp_path, environ=environ)}

    assert got["db"] == ServerConfig(
        name="db",
        source="user",
        command="db-mcp",
        args=("--ro",),
        env={"TOKEN": "t0k"},
        cwd=str(tmp_path),
        tool_timeout=5.0,
    )
    assert got["web"] == ServerConfig(
        name="web",
        source="user",
        transport="http",
        url="https://mcp.example.com/mcp",
        headers={"Authorization": "Bearer k3y"},
        cwd=str(tmp_path),
        startup_timeout=3.0,
        tool_timeout=5.0,
    )
    assert (got["old"].state, got["old"].problem) == (
        "invalid",
        "transport 'sse' is not supported (use stdio or http)",
    )
    assert (got["off"].state, got["off"].problem) == ("disabled", "disabled in the configuration")
    assert (got["bad"].state, got["bad"].problem) == ("invalid", "args must be a list of strings")
    assert got["unset"].problem == "environment variable NOPE is not set"
    assert got["web"].public() == {
        "type": "http",
        "url": "https://mcp.example.com/mcp",
        "headers": ["Authorization"],
    }


def test_project_servers_start_only_in_trusted_projects(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    project = tmp_path / "repo"
    (project / ".agentls").mkdir(parents=True)
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tracker": {"command": "tracker-mcp"}, "db": {"command": "a"}}})
    )
    (project / ".agentls" / "config.json").write_text(
        json.dumps(
            {
                "mcpServers": {"db": {"command": "project-db"}},
                "mcp": {"trustedProjects": ["*"]},  # a project cannot trust itself
            }
        )
    )
    user_dir = home / "config" / "agentls"
    user_dir.mkdir(parents=True)
    user_file = user_dir / "config.json"
    user_file.write_text(json.dumps({"mcpServers": {"notes": {"url": "http://127.0.0.1:9/mcp"}}}))

    config = load_config(project, environ={})
    assert "mcpServers" in config and "mcp" not in config
    assert config["projectMcpServers"] == {
        "tracker": {"command": "tracker-mcp"},
        "db": {"command": "project-db"},
    }
    servers = session_servers(config, project, environ={})
    assert [(s.name, s.source, s.state) for s in servers] == [
        ("db", "project", "untrusted"),
        ("notes", "user", "enabled"),
        ("tracker", "project", "untrusted"),
    ]
    assert "trustedProjects" in servers[0].problem

    user_file.write_text(json.dumps({"mcp": {"trustedProjects": [str(tmp_path)]}}))
    servers = session_servers(load_config(project, environ={}), project, environ={})
    assert [(s.name, s.command, s.state) for s in servers] == [
        ("db", "project-db", "enabled"),
        ("tracker", "tracker-mcp", "enabled"),
    ]


def test_client_servers_replace_configured_ones(tmp_path):
    config = {"mcpServers": {"db": {"command": "user-db"}}}
    client = {"db": {"command": "client-db"}, "extra": {"url": "http://127.0.0.1:1/mcp"}}
    servers = session_servers(config, tmp_path, client=client, environ={})
    assert [(s.name, s.source, s.command or s.url) for s in servers] == [
        ("db", "client", "client-db"),
        ("extra", "client", "http://127.0.0.1:1/mcp"),
    ]


def test_acp_and_cli_shapes(tmp_path):
    pair = lambda n, v: SimpleNamespace(name=n, value=v)  # noqa: E731
    acp_servers = [
        SimpleNamespace(name="demo", command="python", args=["s.py"], env=[pair("A", "1")]),
        SimpleNamespace(name="web", type="http", url="http://h/mcp", headers=[pair("X", "y")]),
    ]
    assert from_acp(acp_servers) == {
        "demo": {"command": "python", "args": ["s.py"], "env": {"A": "1"}},
        "web": {"type": "http", "url": "http://h/mcp", "headers": {"X": "y"}},
    }
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    inline = json.dumps({"mcpServers": {"b": {"url": "http://h/mcp"}}})
    assert from_mcp_config([str(file), inline]) == {
        "a": {"command": "x"},
        "b": {"url": "http://h/mcp"},
    }
    with pytest.raises(ValueError, match="expected"):
        from_mcp_config(['{"servers": {}}'])
    with pytest.raises(ValueError, match="No such file"):
        from_mcp_config([str(tmp_path / "missing.json")])
    strict = {"mcp": {"only": ["a"]}, "mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}
    strict["projectMcpServers"] = {"c": {"command": "z"}}
    assert [s.name for s in session_servers(strict, tmp_path, environ={})] == ["a"]


# -- the tool adapter ---------------------------------------------------------------------


def test_tool_names_are_safe_for_model_apis():
    assert tool_name("db", "query") == "mcp__db__query"
    assert tool_name("my.db", "run query") == "mcp__my_db__run_query"
    long = tool_name("server", "x" * 80)
    assert len(long) == 64 and long.startswith("mcp__server__xxx")
    assert long != tool_name("server", "x" * 81)


def test_arguments_are_checked_against_the_server_schema():
    schema = {
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "tags": {"type": "array"}},
        "required": ["seconds"],
    }
    model = input_model(schema)
    assert model.model_validate({"seconds": 2, "tags": ["a"]}).model_dump() == {
        "seconds": 2,
        "tags": ["a"],
    }
    with pytest.raises(ValidationError, match="seconds: 'x' is not of type 'number'"):
        model.model_validate({"seconds": "x"})
    with pytest.raises(ValidationError, match="'seconds' is a required property"):
        model.model_validate({})
    broken = input_model({"type": "object", "properties": {"a": {"type": 12}}})
    assert broken.model_validate({"a": 1}).model_dump() == {"a": 1}


def test_results_of_every_content_kind():
    blob = types.BlobResourceContents(uri="file:///a.bin", blob="AAAA", mime_type="app/x")
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
            types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", uri="file:///r.txt", name="r.txt"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="note://1", text="body"),
            ),
            types.EmbeddedResource(type="resource", resource=blob),
        ]
    )
    mapped = to_result(result)
    assert mapped.content == (
        "hello\n[image: image/png, 8 bytes]\n[audio: audio/wav, 3 bytes]\n"
        "[resource link: file:///r.txt (r.txt)]\n[resource: note://1]\nbody\n"
        "[resource: file:///a.bin, app/x, 3 bytes]"
    )
    assert [i.data_url for i in mapped.images] == ["data:image/png;base64,iVBORw0KGgo="]
    assert not mapped.is_error

    structured = to_result(types.CallToolResult(content=[], structured_content={"n": 1}))
    assert structured.content == '{"n": 1}'
    failed = to_result(
        types.CallToolResult(content=[types.TextContent(type="text", text="no")], is_error=True)
    )
    assert (failed.content, failed.is_error) == ("no", True)


def test_tool_result_images_round_trip_and_become_a_note_for_text_only_models():
    png = ImagePart("data:image/png;base64,iVBORw0KGgo=")
    history = [
        Message("assistant", [ToolCallPart("c1", "mcp__demo__pixel", {})]),
        Message("tool", [ToolResultPart("c1", "mcp__demo__pixel", "[image]", images=[png])]),
    ]
    stored = json.loads(json.dumps([codec.message_to_dict(m) for m in history]))
    assert stored[1]["parts"][0]["images"] == [
        {"data_url": png.data_url, "kind": "image", "name": None, "seen_by": None}
    ]
    assert [codec.message_from_dict(d) for d in stored] == history

    assert images.has_images(history)
    assert images.without_images(history)[1] == Message(
        "tool", [ToolResultPart("c1", "mcp__demo__pixel", f"[image]\n{images.OMITTED}")]
    )
    assert history[1].parts[0].images == [png]  # the stored history keeps its images


# -- real servers through the pool --------------------------------------------------------


async def test_a_stdio_server_lists_calls_cancels_and_stops(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (config,) = session_servers({"mcpServers": {"demo": demo_entry(state)}}, tmp_path)
    pool = McpPool(log_dir=tmp_path / "logs")
    servers = McpSessionServers(pool, tmp_path)
    tools = await servers.start([config])
    try:
        assert sorted(t.name for t in tools) == ["mcp__demo__pixel", "mcp__demo__slow"]
        by_name = {t.name: t for t in tools}
        pixel, slow = by_name["mcp__demo__pixel"], by_name["mcp__demo__slow"]
        assert pixel.title(None) == "One pixel (demo)"
        assert slow.spec()["parameters"]["properties"]["seconds"]["type"] == "number"
        ctx = ToolContext(cwd=tmp_path)

        image = await pixel.run(ctx, pixel.Input.model_validate({}))
        assert image.content == "[image: image/png, 70 bytes]"
        assert image.images[0].mime_type == "image/png"

        done = await slow.run(ctx, slow.Input.model_validate({"seconds": 0.01}))
        assert done.content == "slept 0.01 s"

        async def cancel_once_it_runs(scope: anyio.CancelScope) -> None:
            await wait_for_file(state / "slow-started")
            # A cancel that lands at once is lost on the way (the server's tool keeps running):
            # let the call settle first.
            await anyio.sleep(0.5)
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once_it_runs, tg.cancel_scope)
            await slow.run(ctx, slow.Input.model_validate({"seconds": 60}))
        await wait_for_file(state / "slow-cancelled")

        (info,) = servers.describe()
        assert (info.status, info.server_info.name, info.server_info.version) == (
            "connected",
            "demo",
            "1.2.3",
        )
        assert [n.to_wire() for n in servers.notes] == [
            {"kind": "mcp_status", "server": "demo", "status": "connected", "tools": 2}
        ]
        (pid,) = pids(state)
        assert alive(pid)
    finally:
        await servers.close()
    assert not alive(pid)
    assert len(pool) == 0


async def test_a_crash_fails_its_call_and_the_next_call_restarts_the_server(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (config,) = session_servers({"mcpServers": {"demo": demo_entry(state)}}, tmp_path)
    servers = McpSessionServers(McpPool(log_dir=tmp_path / "logs"), tmp_path)
    tools = {t.name: t for t in await servers.start([config])}
    servers.notes.clear()
    emitted: list = []
    ctx = ToolContext(cwd=tmp_path, sink=SimpleNamespace(emit=emitted.append))
    slow, pixel = tools["mcp__demo__slow"], tools["mcp__demo__pixel"]
    crash = slow.Input.model_validate({"crash": True})
    try:
        with pytest.raises(ToolError, match="is not running \\(failed: the server closed"):
            await slow.run(ctx, crash)
        assert [(u.server, u.to_wire()["status"]) for u in emitted] == [("demo", "failed")]
        [first] = pids(state)
        picture = await pixel.run(ctx, pixel.Input.model_validate({}))
        assert len(picture.images) == 1 and not picture.is_error
        assert [u.to_wire()["status"] for u in emitted] == ["failed", "connected"]
        assert len(pids(state)) == 2 and await wait_dead(first)
        for _ in range(MAX_RESTARTS - 1):
            with pytest.raises(ToolError, match="the server closed"):
                await slow.run(ctx, crash)
            await pixel.run(ctx, pixel.Input.model_validate({}))
        with pytest.raises(ToolError, match="the server closed"):
            await slow.run(ctx, crash)
        with pytest.raises(ToolError, match=f"restarted {MAX_RESTARTS} times in this session"):
            await pixel.run(ctx, pixel.Input.model_validate({}))
        assert len(pids(state)) == MAX_RESTARTS + 1
    finally:
        await servers.close()


async def test_sessions_of_a_project_share_a_server_until_the_last_one_closes(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (config,) = session_servers({"mcpServers": {"demo": demo_entry(state)}}, tmp_path)
    pool = McpPool()
    first, second = McpSessionServers(pool, tmp_path), McpSessionServers(pool, tmp_path)
    async with anyio.create_task_group() as group:
        group.start_soon(first.start, [config])
        group.start_soon(second.start, [config])
    (pid,) = pids(state)
    assert first.connections["demo"] is second.connections["demo"]
    await first.close()
    assert alive(pid)
    await second.close()
    assert not alive(pid)


async def test_servers_that_cannot_start_are_reported_not_raised(tmp_path):
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    configs = session_servers(
        {
            "mcpServers": {
                "missing": {"command": str(tmp_path / "no-such-server")},
                "mute": {"command": hang[0], "args": hang[1:], "startupTimeout": 1},
                "broken": {
                    "command": sys.executable,
                    "args": ["-c", "import sys; sys.exit('boom')"],
                },
            }
        },
        tmp_path,
    )
    servers = McpSessionServers(McpPool(log_dir=tmp_path / "logs"), tmp_path)
    assert await servers.start(configs) == []
    await servers.close()
    errors = {n.server: (n.status, n.error) for n in servers.notes}
    assert errors["missing"] == ("failed", f"command not found: {tmp_path / 'no-such-server'}")
    assert errors["mute"] == ("failed", "did not start within 1 s")
    assert errors["broken"][0] == "failed"
    assert "boom" in errors["broken"][1]


def test_allow_and_disallow_lists_cover_servers_and_tools():
    conn = SimpleNamespace(name="db", config=SimpleNamespace(tool_timeout=1))
    tools = [
        McpTool(conn, types.Tool(name=n, input_schema={"type": "object"}))  # type: ignore[arg-type]
        for n in ("query", "drop")
    ]
    assert covered_tools(["mcp__db"], tools) == {"mcp__db__query", "mcp__db__drop"}
    assert covered_tools(["mcp__db__*"], tools) == {"mcp__db__query", "mcp__db__drop"}
    assert covered_tools(["mcp__db__query", "Bash", 3], tools) == {"mcp__db__query"}
    assert covered_tools(["mcp__other"], tools) == set()


async def test_the_native_engine_filters_allows_and_stops_mcp_tools(tmp_path):
    from server.engines.native import NativeEngine
    from server.turn import SessionSpec

    state = tmp_path / "state"
    state.mkdir()
    config = {
        "llm": {"provider": "scripted", "model": "scripted"},
        "mcpServers": {"demo": demo_entry(state)},
        "tools": {"disallowed": ["mcp__demo__slow"]},
        "permissions": {"allow": ["mcp__demo__*"]},
    }
    engine = NativeEngine(environ={"HOME": str(tmp_path)})
    session = await engine.create_session(SessionSpec("s1", tmp_path, config))
    child = await engine.create_session(SessionSpec("s2", tmp_path, config, subagent="explorer"))
    try:
        assert [n for n in session.tools if n.startswith("mcp__")] == ["mcp__demo__pixel"]
        assert "mcp__demo__pixel" in session.permissions.allow_rules
        assert [n for n in child.tools if n.startswith("mcp__")] == []
        assert session.mcp.connections["demo"] is child.mcp.connections["demo"]
        (pid,) = pids(state)
        await engine.close_session(session)
        assert alive(pid)
    finally:
        await engine.close_session(child)
        await engine.dispose()
    assert not alive(pid)

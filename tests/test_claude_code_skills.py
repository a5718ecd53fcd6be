"""agentls's skills reach the real Claude Code CLI (the binary bundled with claude-agent-sdk) as
a plugin, through `agentls serve --engine claude-code` over real stdio, with the CLI talking to
the loopback fake Anthropic endpoint: the model's request lists them as `agentls:<name>`. A
cloned repository's own skill folders go along only when the user trusts it."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from bench.peer import peer_binary
from server.testing.fake_llm import Reply
from tests.agent_client import AgentClient, server_env
from tests.trust_fixture import write_json

CLAUDE = peer_binary()
pytestmark = pytest.mark.skipif(CLAUDE is None, reason="no Claude Code CLI installed")


def skill(root: Path, name: str, description: str) -> None:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo {name}.\n")


def plugin_dirs(workspace: Path) -> list[Path]:
    """The `--plugin-dir` of each process running in `workspace`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if os.readlink(proc / "cwd") != str(workspace):
                continue
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--plugin-dir" in argv:
            found.append(Path(argv[argv.index(b"--plugin-dir") + 1].decode()))
    return found


async def first_request(tmp_path, workspace, fake_llm, *, trusted: bool):
    if trusted:
        write_json(
            tmp_path / "config" / "agentls" / "config.json", {"trustedProjects": [str(workspace)]}
        )
    for _ in range(10):
        fake_llm.script(Reply(text="ok"))
    env = server_env(
        tmp_path,
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=fake_llm.base_url,
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    client = AgentClient()
    await client.start(env, "--engine", "claude-code", "--engine-command", shlex.join([CLAUDE]))
    try:
        await client.initialize()
        engines = await client.call("engines/list", {})
        session = await client.call("session/new", {"cwd": str(workspace)})
        result = await client.call(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hi"}]},
        )
        (plugin,) = plugin_dirs(workspace)
        linked = sorted(p.name for p in (plugin / "skills").iterdir())
        await client.call("session/close", {"sessionId": session["sessionId"]})
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    assert not plugin.exists(), "the plugin folder goes with its session"
    asked = next(r for r in fake_llm.requests if r.body.get("tools"))
    return json.dumps(asked.body), linked, engines


async def test_skills_reach_claude_code_as_a_plugin(tmp_path, workspace, fake_llm):
    skill(tmp_path / ".agentls" / "skills", "greet-people", "Greets people warmly by name.")
    skill(tmp_path / ".claude" / "skills", "own-skill", "Claude Code finds this one itself.")
    skill(workspace / ".agentls" / "skills", "repo-skill", "A cloned repository's skill.")
    body, linked, engines = await first_request(tmp_path, workspace, fake_llm, trusted=False)
    assert "agentls:greet-people: Greets people warmly by name." in body
    assert "agentls:review" in body, "the built-in skills go too"
    assert "repo-skill" not in body and "repo-skill" not in linked
    assert "own-skill" not in linked and "own-skill" in body  # found by Claude Code, not doubled
    caps = {e["id"]: e["capabilities"]["skills"] for e in engines["engines"]}
    assert caps["claude-code"] is True and caps["native"] is True


async def test_a_trusted_workspaces_skills_go_along(tmp_path, workspace, fake_llm):
    skill(workspace / ".agentls" / "skills", "repo-skill", "A trusted repository's skill.")
    body, linked, _ = await first_request(tmp_path, workspace, fake_llm, trusted=True)
    assert "repo-skill" in linked
    assert "agentls:repo-skill: A trusted repository's skill." in body

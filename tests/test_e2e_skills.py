"""Skills end to end: the model runs one with the `skill` tool, the user with `/name args` in a
prompt (JSON-RPC over real stdio, stream-json, the service), and `skills/list`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from server.providers.messages import is_turn_context
from server.providers.scripted import ScriptedReply
from server.skills import BUILTIN_DIR
from server.testing.fake_llm import Reply
from tests.agent_client import open_session, server_env
from tests.test_e2e_subagents import Harness, results

GREET = """---
name: Greet
description: Greet someone by name.
allowed-tools: Write
providerOptions:
  temperature: 0.1
---
Say hello to $1 (all: $ARGUMENTS) and mention $$5.
"""


def add_skill(workspace: Path, folder: str, text: str, layer: str = ".agentls") -> Path:
    path = workspace / layer / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def prompt_text(request) -> str:
    """The last user message before the turn context."""
    users = [m for m in request.messages if m.role == "user" and not is_turn_context(m)]
    return users[-1].text


def turn_context(request) -> str:
    return request.messages[-1].text


async def test_the_model_runs_a_skill_and_gets_the_rendered_body(tmp_path):
    def reply(request):
        last = request.messages[-2]  # the message before the turn context
        if last.role == "user" and last.text == "please greet":
            return ScriptedReply(tool_calls=[("skill", {"skill": "greet", "args": "Ada Lovelace"})])
        if last.role == "tool" and last.parts[0].name == "skill":
            return ScriptedReply(tool_calls=[("write_file", {"path": "hi.txt", "content": "hi"})])
        if last.role == "user" and last.text == "write b":
            return ScriptedReply(tool_calls=[("write_file", {"path": "b.txt", "content": "b"})])
        return ScriptedReply(text="ok")

    h = Harness(tmp_path, reply)
    path = add_skill(h.workspace, "greet", GREET)
    await h.open(trusted=True)  # a project skill's allowed-tools count in a trusted folder
    result = await h.prompt("please greet")
    assert result.terminal == "completed"
    first, second, _third = h.provider.requests
    [rendered] = results(second)
    assert not rendered.is_error
    assert rendered.content == (
        f"Skill directory: {path.parent.resolve()}\n\n"
        "Say hello to Ada (all: Ada Lovelace) and mention $5.\n"
    )
    assert "active skills" not in turn_context(first)
    assert "active skills: Greet" in turn_context(second)
    assert first.options.get("temperature") is None and second.options["temperature"] == 0.1
    # `allowed-tools: Write` lets the write run without asking while the skill is active.
    assert h.channel.permission_requests == []
    assert (h.workspace / "hi.txt").read_text() == "hi"
    assert "- **Greet**: Greet someone by name." in first.system
    # The next turn starts without active skills: writes ask again.
    await h.prompt("write b")
    assert len(h.channel.permission_requests) == 1
    assert "active skills" not in turn_context(h.provider.requests[-1])
    assert h.provider.requests[-1].options.get("temperature") is None


async def test_skill_tool_errors(tmp_path):
    calls = [
        ("skill", {"skill": "nope"}),
        ("skill", {"skill": "deploy"}),
        ("skill", {"skill": "GREET"}),
    ]

    def reply(request):
        return ScriptedReply(text="ok") if results(request) else ScriptedReply(tool_calls=calls)

    h = Harness(tmp_path, reply)
    add_skill(h.workspace, "greet", GREET)
    add_skill(
        h.workspace,
        "deploy",
        "---\nname: deploy\ndescription: Ship it.\ndisable-model-invocation: true\n---\nGo.\n",
    )
    await h.open()
    await h.prompt("try skills")
    unknown, blocked, ok = results(h.provider.requests[-1])
    builtin = sorted(p.name for p in BUILTIN_DIR.iterdir() if (p / "SKILL.md").is_file())
    names = sorted([*builtin, "Greet"], key=str.lower)
    assert unknown.is_error and unknown.content == (
        f"Unknown skill 'nope'. Available skills: {', '.join(names)}."
    )
    assert blocked.is_error and blocked.content.startswith(
        "The skill 'deploy' can only be run by the user (as /deploy)"
    )
    assert not ok.is_error and "Say hello to $1 (all: )" in ok.content
    assert "deploy" not in h.provider.requests[0].system.split("## Skills")[1]


async def test_a_slash_command_in_a_prompt_runs_the_skill(tmp_path):
    h = Harness(tmp_path, lambda request: ScriptedReply(text="hello Ada"))
    path = add_skill(h.workspace, "greet", GREET, layer=".claude")
    add_skill(
        h.workspace,
        "deploy",
        "---\nname: deploy\ndescription: Ship it.\ndisable-model-invocation: true\n---\n"
        "Deploy $ARGUMENTS now.\n",
    )
    await h.open()
    await h.prompt("/greet Ada Lovelace")
    [request] = h.provider.requests
    assert prompt_text(request) == (
        f"/greet Ada Lovelace\n\nSkill directory: {path.parent.resolve()}\n\n"
        "Say hello to Ada (all: Ada Lovelace) and mention $5.\n"
    )
    assert "active skills: Greet" in turn_context(request)
    assert request.options["temperature"] == 0.1
    # A skill the model may not run is still the user's to run.
    await h.prompt("/deploy staging")
    assert prompt_text(h.provider.requests[-1]).endswith("Deploy staging now.\n")
    # Not a skill: the prompt goes to the model as written.
    await h.prompt("/usr/bin/env is broken")
    await h.prompt("/unknown thing")
    assert [prompt_text(r) for r in h.provider.requests[-2:]] == [
        "/usr/bin/env is broken",
        "/unknown thing",
    ]


# -- over real stdio ----------------------------------------------------------------------------


async def test_slash_command_and_skill_catalogue_over_json_rpc(tmp_path, workspace, fake_llm):
    add_skill(workspace, "greet", GREET)
    broken = add_skill(workspace, "broken", "---\nname: broken\ndescription: [oops\n---\n")
    fake_llm.script(Reply(text="reviewed"))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        result = await client.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "/review main"}]},
        )
        by_session = await client.call("skills/list", {"sessionId": session_id})
        by_cwd = await client.call("skills/list", {"cwd": str(workspace)})
        agents = await client.call("subagents/list", {"sessionId": session_id})
        with pytest.raises(JsonRpcException) as neither:
            await client.call("skills/list", {})
        with pytest.raises(JsonRpcException) as unknown:
            await client.call("subagents/list", {"sessionId": "sess_nope"})
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    sent = [m for m in fake_llm.requests[0].body["messages"] if m["role"] == "user"]
    text = sent[0]["content"] if isinstance(sent[0]["content"], str) else sent[0]["content"][0]
    text = text if isinstance(text, str) else text["text"]
    assert text.startswith(f"/review main\n\nSkill directory: {BUILTIN_DIR / 'review'}\n\n")
    assert "Arguments: main" in text

    assert by_session == by_cwd
    names = [s["name"] for s in by_session["skills"]]
    assert names == sorted(names, key=str.lower) and {"Greet", "review", "explain"} <= set(names)
    greet = next(s for s in by_session["skills"] if s["name"] == "Greet")
    assert greet["source"] == "project" and greet["allowedTools"] == ["Write"]
    assert by_session["warnings"] == [
        {
            "path": str(broken),
            "message": by_session["warnings"][0]["message"],
        }
    ]
    assert "invalid YAML" in by_session["warnings"][0]["message"]
    assert [a["name"] for a in agents["subagents"]] == ["explorer", "executor", "design"]
    assert neither.value.code == -32602 and "sessionId or cwd" in neither.value.message
    assert unknown.value.code == -31001


def test_slash_command_through_stream_json_print_mode(tmp_path, workspace):
    add_skill(workspace, "greet", GREET)
    proc = subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", "/greet Grace", "--output-format", "json"],
        capture_output=True,
        cwd=workspace,
        env=server_env(tmp_path, AGENTLS_PROVIDER="scripted"),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    result = json.loads(proc.stdout)
    # The scripted model echoes the prompt it received: the rendered skill.
    assert "Say hello to Grace (all: Grace) and mention $5." in result["result"]
    assert result["result"].startswith("You said: /greet Grace\n\nSkill directory: ")


async def test_a_skills_model_runs_the_rest_of_its_turn(tmp_path):
    def reply(request):
        last = request.messages[-2]
        if last.role == "user" and last.text == "review please":
            return ScriptedReply(tool_calls=[("skill", {"skill": "deep"})])
        return ScriptedReply(text="done")

    h = Harness(tmp_path, reply)
    add_skill(
        h.workspace,
        "deep",
        "---\nname: deep\ndescription: Think hard.\nmodel: scripted-large\n---\nLook closely.\n",
    )
    await h.open()
    first = await h.prompt("review please")
    second = await h.prompt("/deep now")
    third = await h.prompt("and again")
    assert [first.terminal, second.terminal, third.terminal] == ["completed"] * 3
    models = [r.model for r in h.provider.requests]
    assert models == ["scripted", "scripted-large", "scripted-large", "scripted"]
    switches = [(u["model"], u["reason"]) for u in h.channel.kinds("model_switched")]
    # The move back is announced with the next turn's first call, unless that call moves
    # to a skill's model again.
    assert switches == [
        ("scripted-large", "skill deep"),
        ("scripted-large", "skill deep"),
        ("scripted", "skill finished"),
    ]
    assert h.service.get(h.session_id).handle.model == "scripted"

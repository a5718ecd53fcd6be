"""Skills reach an external ACP agent: `agentls serve --engine acp` expands `/name args` into
the skill's text before the prompt goes to the agent (here a small agent that writes down what
it got), and says that a skill's `allowed-tools` cannot apply there."""

from __future__ import annotations

import json
import shlex
import sys

from tests.agent_client import AgentClient, server_env
from tests.test_e2e_skills import add_skill

RECORDING_AGENT = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}}
    elif method == "session/new":
        result = {"sessionId": "rec"}
    elif method == "session/prompt":
        with open(sys.argv[1], "a") as out:
            out.write(json.dumps(msg["params"]["prompt"]) + "\\n")
        result = {"stopReason": "end_turn"}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""

SKILL = """---
name: shout
description: Say it loud
allowed-tools: Bash(echo:*), read_file
---
Say $ARGUMENTS in capitals.
"""


async def run(tmp_path, workspace, *texts: str) -> tuple[AgentClient, list[list[dict]]]:
    agent = tmp_path / "agent.py"
    agent.write_text(RECORDING_AGENT)
    record = tmp_path / "prompts.jsonl"
    command = shlex.join([sys.executable, str(agent), str(record)])
    client = AgentClient()
    await client.start(server_env(tmp_path), "--engine", "acp", "--engine-command", command)
    try:
        await client.initialize()
        client.engines = await client.call("engines/list", {})
        result = await client.call("session/new", {"cwd": str(workspace)})
        for text in texts:
            params = {"sessionId": result["sessionId"], "prompt": [{"type": "text", "text": text}]}
            assert (await client.call("session/prompt", params))["terminal"] == "completed"
    finally:
        await client.close()
    return client, [json.loads(line) for line in record.read_text().splitlines()]


async def test_a_skill_command_reaches_the_agent_expanded(tmp_path, workspace) -> None:
    path = add_skill(workspace, "shout", SKILL)
    client, prompts = await run(tmp_path, workspace, "/shout hello there", "/nosuch thing")
    [[first], [second]] = prompts
    assert first["text"].startswith("/shout hello there\n\n")
    assert f"Skill directory: {path.parent}" in first["text"]
    assert first["text"].endswith("Say hello there in capitals.\n")
    assert second["text"] == "/nosuch thing", "what is not a skill goes as it was typed"
    told = "".join(
        u["update"]["text"] for u in client.updates if u["update"]["kind"] == "agent_message_chunk"
    )
    assert "shout" in told and "allowed-tools" in told and "Bash(echo:*)" in told
    caps = {e["id"]: e["capabilities"]["skills"] for e in client.engines["engines"]}
    assert caps["acp"] is True

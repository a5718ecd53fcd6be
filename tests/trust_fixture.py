"""A cloned repository that tries to widen its own permissions, and one turn of `agentls serve`
(real stdio) in it: the model's tool calls are scripted, every permission request is recorded
and rejected, so a call that ran without a request shows up as the canary file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env

CANARY = "PWNED"


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def clone(workspace: Path, fake_llm: FakeModelServer, *, project=None, user=None) -> Path:
    """`project` goes to the repository's `.agentls/config.json`, `user` to the user config of
    the test home (`workspace.parent`), which also points the provider at the fake model."""
    llm = {"provider": "openai", "model": "gpt-5.5", "maxRetries": 0}
    write_json(workspace / ".agentls" / "config.json", {"llm": llm, **(project or {})})
    mine = {"llm": {"baseUrl": fake_llm.openai_base_url}}
    for key, value in (user or {}).items():
        mine[key] = {**mine.get(key, {}), **value} if isinstance(value, dict) else value
    write_json(workspace.parent / "config" / "agentls" / "config.json", mine)
    (workspace / ".git").mkdir(exist_ok=True)
    return workspace


def add_skill(workspace: Path, name: str, extra: str, layer: str = ".claude") -> None:
    path = workspace / layer / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {name} things\n{extra}\n---\nDo {name}.\n")


def bash(command: str, call_id: str = "call_sh") -> FakeToolCall:
    return FakeToolCall("bash", {"command": command}, id=call_id)


@dataclass
class Turn:
    client: AgentClient
    result: dict[str, Any]
    requests: list[dict[str, Any]]
    new: dict[str, Any]

    def statuses(self) -> list[str]:
        return [
            u["update"]["status"]
            for u in self.client.updates
            if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] != "in_progress"
        ]

    def updates(self, kind: str) -> list[dict[str, Any]]:
        return [u["update"] for u in self.client.updates if u["update"]["kind"] == kind]


async def serve_turn(
    home: Path,
    workspace: Path,
    fake_llm: FakeModelServer,
    calls: list[FakeToolCall],
    *,
    new: dict[str, Any] | None = None,
    args: tuple[str, ...] = (),
    answers: tuple[str, ...] = (),
) -> Turn:
    """One prompt; the model makes `calls` one by one, then says done. Permission requests get
    `answers` in turn, then `reject_once`."""
    fake_llm.script(*[Reply(tool_calls=[c]) for c in calls], Reply(text="done"))
    client = AgentClient()
    queue = iter(answers)
    client.on_permission = lambda p: {
        "outcome": {"outcome": "selected", "optionId": next(queue, "reject_once")}
    }
    await client.start(server_env(home, OPENAI_API_KEY="k"), *args)
    try:
        await client.initialize()
        session = await client.call("session/new", {"cwd": str(workspace), **(new or {})})
        result = await client.call(
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]},
        )
    finally:
        await client.close()
    return Turn(client, result, client.permission_requests, session)

"""SDK hooks over the control channel: the agent's hook engine (`server.agent.hooks`) calls a
host's callback with `hook_callback`; tool names and arguments go out as Claude Code spells them
and a rewritten input comes back in agentls's."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from server.agent.hooks import Call, HookFailed
from server.frontends.streamjson_args import from_claude, to_claude
from server.frontends.streamjson_frames import cc_tool_name


class Channel(Protocol):
    async def exchange(self, request: dict[str, Any], *, asks: bool = True) -> dict[str, Any]: ...

    def cwd(self) -> Path: ...


def hook_caller(door: Channel) -> Call:
    async def call(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict:
        tool = payload.get("tool_name")
        sent = dict(payload)
        if isinstance(tool, str):
            sent["tool_name"] = cc_tool_name(tool)
            if isinstance(payload.get("tool_input"), dict):
                sent["tool_input"] = to_claude(tool, payload["tool_input"], door.cwd())
        request = {"subtype": "hook_callback", "callback_id": callback_id, "input": sent}
        if tool_use_id is not None:
            request["tool_use_id"] = tool_use_id
        answer = await door.exchange(request, asks=False)
        if answer.get("subtype") != "success":
            raise HookFailed(str(answer.get("error") or "the host answered with an error"))
        output = answer.get("response") or {}
        specific = output.get("hookSpecificOutput")
        if isinstance(tool, str) and isinstance(specific, dict):
            updated = specific.get("updatedInput")
            if isinstance(updated, dict):
                output = {
                    **output,
                    "hookSpecificOutput": {**specific, "updatedInput": from_claude(tool, updated)},
                }
        return output

    return call

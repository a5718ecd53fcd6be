"""What an SDK host runs in its own process, reached over the control channel: hooks (the
agent's hook engine, `server.agent.hooks`, calls a host's callback with `hook_callback`; tool
names and arguments go out as Claude Code spells them and a rewritten input comes back in
agentls's) and SDK MCP servers (`type: sdk`: each JSON-RPC message in a `mcp_message`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from server.agent.hooks import Call, HookFailed
from server.frontends.streamjson_args import from_claude, to_claude
from server.frontends.streamjson_frames import cc_tool_name, new_uuid
from server.mcp.sdk import Bridge


class Channel(Protocol):
    session_id: str

    async def exchange(self, request: dict[str, Any], *, asks: bool = True) -> dict[str, Any]: ...

    def cwd(self) -> Path: ...

    def write(self, frame: dict[str, Any]) -> None: ...


def hook_caller(door: Channel, *, events: bool = False) -> Call:
    """`events`: write `hook_started` / `hook_response` frames around each call
    (`--include-hook-events`)."""

    async def call(callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict:
        if not events:
            return await ask_host(callback_id, payload, tool_use_id)
        event = str(payload.get("hook_event_name", ""))
        tool = payload.get("tool_name")
        name = f"{event}:{cc_tool_name(tool)}" if isinstance(tool, str) else event
        hook = {"hook_id": new_uuid(), "hook_name": name, "hook_event": event}
        door.write(frame("hook_started", hook, door.session_id))
        outcome, output = "error", {}
        try:
            output = await ask_host(callback_id, payload, tool_use_id)
            outcome = "success"
            return output
        finally:
            shown = {"output": json.dumps(output), "stdout": "", "stderr": "", "outcome": outcome}
            door.write(frame("hook_response", {**hook, **shown}, door.session_id))

    async def ask_host(
        callback_id: str, payload: dict[str, Any], tool_use_id: str | None
    ) -> dict[str, Any]:
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
            output = {**output, "hookSpecificOutput": ours(tool, specific)}
        return output

    return call


def ours(tool: str, specific: dict[str, Any]) -> dict[str, Any]:
    """A hook's rewritten input (PreToolUse's, a PermissionRequest decision's) in agentls's
    argument names."""
    out = dict(specific)
    if isinstance(out.get("updatedInput"), dict):
        out["updatedInput"] = from_claude(tool, out["updatedInput"])
    decision = out.get("decision")
    if isinstance(decision, dict) and isinstance(decision.get("updatedInput"), dict):
        out["decision"] = {**decision, "updatedInput": from_claude(tool, decision["updatedInput"])}
    return out


def frame(subtype: str, fields: dict[str, Any], session_id: str) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": subtype,
        **fields,
        "uuid": new_uuid(),
        "session_id": session_id,
    }


def with_bridges(flags: dict[str, Any], door: Channel) -> dict[str, Any]:
    """`flags` with a bridge to the host on every `type: sdk` MCP server (from `--mcp-config`
    or `sdkMcpServers`); one no host serves stays without and fails to start, saying why."""
    servers = flags.get("mcpServers")
    if not isinstance(servers, dict):
        return flags
    bridged = {
        name: {**entry, "bridge": mcp_bridge(door, name)}
        if isinstance(entry, dict) and entry.get("type") == "sdk"
        else entry
        for name, entry in servers.items()
    }
    return {**flags, "mcpServers": bridged}


def mcp_bridge(door: Channel, name: str) -> Bridge:
    async def bridge(message: dict[str, Any]) -> dict[str, Any] | None:
        request = {"subtype": "mcp_message", "server_name": name, "message": message}
        answer = await door.exchange(request, asks=False)
        if answer.get("subtype") != "success":
            raise ConnectionError(str(answer.get("error") or "the host answered with an error"))
        return (answer.get("response") or {}).get("mcp_response")

    return bridge

"""What a replay does with a call that reaches beyond its scratch copy of the workspace.

Commands (bash, git writes) run for real only in a sandbox that keeps everything but the copy
read-only and the network off. The web and MCP servers are never reached again: such a call
is `blocked`, and says so. With recorded effects, every such call returns what it returned in
the recording instead of running.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from server.agent.subagents import running_subagent
from server.agent.tool_calls import CALL_ID
from server.mcp.tools import McpTool
from server.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult

BLOCKED_KEY = "replayBlocked"
REPLAY_FLAGS: dict[str, Any] = {
    "sandbox": {"mode": "workspace-write", "network": False, "autoAllow": False, "required": True},
    "mcp": {"only": []},  # no MCP server starts: their calls are blocked or recorded
}


@dataclass(frozen=True)
class Outcome:
    """How a call ended in the recording."""

    output: str | None = None
    error: str | None = None


def outcomes(updates: list[dict[str, Any]]) -> dict[str, Outcome]:
    """Each recorded call's result (completed) or error (failed), by tool call id."""
    found: dict[str, Outcome] = {}
    for u in updates:
        if u.get("kind") != "tool_call_update":
            continue
        if u.get("status") == "completed":
            found[u["toolCallId"]] = Outcome(output=u.get("output") or "")
        elif u.get("status") == "failed":
            found[u["toolCallId"]] = Outcome(error=u.get("error") or "failed")
    return found


def reaches_out(tool: Tool | None, args: Any = None) -> bool:
    """Whether a call acts beyond the workspace copy: a command, the web, an MCP server."""
    if tool is None or isinstance(tool, McpTool) or tool.kind == "fetch":
        return True
    if tool.kind != "execute":
        return False
    return args is None or not (tool.name == "git" and tool.is_read_only(args))


def writes_files(tool: Tool) -> bool:
    return not tool.read_only and tool.kind in ("edit", "delete", "move")


def inside_copy(copy: Path, path: str) -> bool:
    """Whether `path` (relative to the copy, or absolute) is inside it, links resolved."""
    real = os.path.realpath(copy / path)
    return Path(real).is_relative_to(os.path.realpath(copy)) and "\0" not in path


class _AnyInput(ToolInput):
    model_config = ConfigDict(extra="allow")


@dataclass
class Effects:
    """The stand-ins' shared state: the recorded outcomes, and which calls used one."""

    recorded: Mapping[str, Outcome]
    use_recorded: bool
    used: list[str] = field(default_factory=list)


class StandIn(Tool):
    """A tool of the replayed session in place of one that reaches out (`inner`), or of one
    the replay does not have (an MCP server's)."""

    def __init__(self, name: str, inner: Tool | None, effects: Effects):
        self.name = name
        self.inner = inner
        self.effects = effects
        self.description = inner.description if inner else f"{name} (not available in a replay)"
        self.Input = inner.Input if inner else _AnyInput
        self.kind = inner.kind if inner else "other"
        self.read_only = inner.read_only if inner else False
        self.shell = inner.shell if inner else False  # type: ignore[misc]
        self.risk = inner.risk if inner else "medium"  # type: ignore[misc]

    def title(self, args: Any) -> str:
        return self.inner.title(args) if self.inner else self.name

    def is_read_only(self, args: Any) -> bool:
        return self.inner.is_read_only(args) if self.inner else False

    def call_risk(self, args: Any) -> Any:
        return self.inner.call_risk(args) if self.inner else self.risk

    def paths(self, args: Any) -> list[str]:
        return self.inner.paths(args) if self.inner else []

    def always_ask(self, args: Any) -> str | None:
        return self.inner.always_ask(args) if self.inner else None

    async def propose(self, ctx: ToolContext, args: Any) -> Any:
        return await self.inner.propose(ctx, args) if self.inner else None

    def spec(self) -> dict[str, Any]:
        if self.inner:
            return self.inner.spec()
        return {"name": self.name, "description": self.description, "parameters": {}}

    async def run(self, ctx: ToolContext, args: Any) -> ToolResult | dict[str, Any] | str:
        call_id = CALL_ID.get() or ""
        running = running_subagent.get()
        if running is not None:  # a subagent's calls are recorded under its task call's id
            call_id = f"{running.id}/{call_id}"
        if self.inner is not None and writes_files(self.inner):
            outside = [p for p in self.inner.paths(args) if not inside_copy(ctx.cwd, p)]
            if outside:
                return _blocked(
                    f"a replay writes only inside its copy of the workspace: {', '.join(outside)} "
                    "is outside it"
                )
        if not reaches_out(self.inner, args):
            assert self.inner is not None
            return await self.inner.run(ctx, args)
        if self.effects.use_recorded:
            outcome = self.effects.recorded.get(call_id)
            if outcome is None:
                return _blocked(f"{self.name} has no recorded result to play")
            self.effects.used.append(call_id)
            if outcome.error is not None:
                raise ToolError(outcome.error)
            return outcome.output or ""
        if self.inner is not None and self.inner.kind == "execute":
            return await self.inner.run(ctx, args)  # in the replay's sandbox
        if self.inner is not None and self.inner.kind == "fetch":
            why = f"{self.name} reaches the network, which a replay does not"
        else:
            why = f"{self.name} is an MCP server's tool, and a replay starts no MCP servers"
        return _blocked(f"{why}; --recorded-effects plays the recorded result")


def _blocked(reason: str) -> ToolResult:
    return ToolResult({BLOCKED_KEY: reason}, is_error=True)


def stand_in(tools: dict[str, Tool], called: list[str], effects: Effects) -> dict[str, Tool]:
    """`tools` with every tool that reaches out replaced by its stand-in, and a stand-in for
    each name in `called` that `tools` lacks."""
    out = {
        n: StandIn(n, t, effects) if reaches_out(t) or writes_files(t) else t
        for n, t in tools.items()
    }
    for name in called:
        out.setdefault(name, StandIn(name, None, effects))
    return out

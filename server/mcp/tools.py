"""An MCP server's tools as agentls tools.

The model sees `mcp__<server>__<tool>` with the server's own JSON Schema. Arguments are checked
against that schema before anyone is asked for permission; results (text, images, audio,
resources, structured content) come back as text the model reads; images also go to the model as
images (`ToolResult.images`), the text keeping a short mention of each.
Server hints (`readOnlyHint`) never spare the user a question: a read-only MCP tool is a
`fetch`, which asks in `default` mode like `web_fetch` does, but is allowed to ask in `plan`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import jsonschema
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, model_validator

from server.mcp.connection import McpConnection
from server.providers.messages import ImagePart
from server.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult

MAX_NAME = 64  # what model APIs accept for a tool name
MAX_DESCRIPTION = 2048
SETTLE = 2.0
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpTool(Tool):
    """One tool of a connected MCP server, for one session."""

    def __init__(
        self,
        conn: McpConnection,
        tool: types.Tool,
        *,
        after_call: Callable[[ToolContext], None] | None = None,
        revive: Callable[[str], Awaitable[McpConnection]] | None = None,
    ):
        self.conn = conn
        self.remote = tool.name
        self.name = tool_name(conn.name, tool.name)
        self.description = (tool.description or tool.title or tool.name)[:MAX_DESCRIPTION]
        self.schema = tool.input_schema or {"type": "object"}
        self.Input = cached_input_model(json.dumps(self.schema, sort_keys=True))
        hints = tool.annotations
        self.read_only = bool(hints and hints.read_only_hint)
        self.kind = "fetch" if self.read_only else "other"
        self.display = tool.title or (hints.title if hints else None) or tool.name
        self._after_call = after_call
        self._revive = revive

    def title(self, args: Any) -> str:
        return f"{self.display} ({self.conn.name})"

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.schema}

    async def run(self, ctx: ToolContext, args: Any) -> ToolResult:
        try:
            result = await self._call(args.model_dump())
        finally:
            if self._after_call is not None:
                self._after_call(ctx)
        return to_result(result)

    async def _call(self, arguments: dict[str, Any]) -> types.CallToolResult:
        timeout = self.conn.config.tool_timeout
        server = self.conn.name
        if self.conn.status != "connected" and self._revive is not None:
            try:
                self.conn = await self._revive(server)
            except ConnectionError as exc:
                raise ToolError(str(exc)) from None
            if self.remote not in {t.name for t in self.conn.tools}:
                raise ToolError(f"MCP server {server!r} restarted without the tool {self.remote!r}")
        try:
            return await self.conn.call(self.remote, arguments, timeout=timeout)
        except ConnectionError as exc:
            raise ToolError(str(exc)) from None
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                await self.conn.settled(SETTLE)
                raise ToolError(f"{self.conn.unavailable()}; the call did not finish") from None
            if exc.code == types.REQUEST_TIMEOUT:
                raise ToolError(
                    f"MCP server {server!r} did not answer within {timeout:g} s"
                ) from None
            raise ToolError(
                f"MCP server {server!r} answered with an error: {exc.message}"
            ) from None


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` with characters model APIs refuse replaced by `_`, shortened
    with a digest when too long."""
    name = f"mcp__{UNSAFE.sub('_', server)}__{UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def server_prefix(server: str) -> str:
    return f"mcp__{UNSAFE.sub('_', server)}"


@functools.lru_cache(maxsize=1024)
def cached_input_model(schema_json: str) -> type[ToolInput]:
    # Sessions sharing a server share its tools' models (building one costs milliseconds).
    return input_model(json.loads(schema_json))


def input_model(schema: dict[str, Any]) -> type[ToolInput]:
    """A permissive input model that checks arguments against the server's JSON Schema."""
    validator = schema_validator(schema)

    class Arguments(ToolInput):
        model_config = ConfigDict(extra="allow")

        @model_validator(mode="before")
        @classmethod
        def _check(cls, data: Any) -> Any:
            if not isinstance(data, dict):
                raise ValueError("arguments must be a JSON object")
            problems = sorted(validator.iter_errors(data), key=str) if validator else []
            if problems:
                raise ValueError("; ".join(describe_problem(p) for p in problems[:5]))
            return data

    return Arguments


def schema_validator(schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None  # the server checks its own arguments
    return cls(schema)


def describe_problem(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def to_result(result: types.CallToolResult) -> ToolResult:
    parts: list[str] = []
    images: list[ImagePart] = []
    for block in result.content:
        if isinstance(block, types.ImageContent):
            images.append(ImagePart(f"data:{block.mime_type};base64,{block.data}"))
        parts.append(render_block(block))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts) or "(the tool returned nothing)"
    return ToolResult(text, is_error=bool(result.is_error), images=images)


def render_block(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.type}: {block.mime_type}, {decoded_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        about = ", ".join(x for x in (block.name, block.mime_type) if x)
        return f"[resource link: {block.uri}{f' ({about})' if about else ''}]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource: {resource.uri}]\n{resource.text}"
        mime = resource.mime_type or "binary"
        return f"[resource: {resource.uri}, {mime}, {decoded_size(resource.blob)} bytes]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


def decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")

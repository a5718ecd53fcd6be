"""The tool contract.

Each tool is a class with a pydantic `Input`, a description written for the model, policy
metadata (`read_only`, `risk`, `kind`) and an async `run`. Tools raise `ToolError` for failures the
model should see and act on; anything else they raise is also returned to the model as an error
result, never propagated into the agent loop.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from server.providers.messages import ImagePart

if TYPE_CHECKING:
    from server.tools.checkpoint_store import Checkpoints
    from server.tools.sandbox import Sandbox

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "fetch", "think", "other"]
Risk = Literal["low", "medium", "high"]

RESULT_CAP = 50_000


class ToolError(Exception):
    """A failure reported to the model as the tool's result."""


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FileAccess(Protocol):
    """Files as another party holds them (the editor's buffers). `read_text` gives None and
    `write_text` False when the file is not there; the tools then use the disk."""

    async def read_text(self, path: Path) -> str | None: ...

    async def write_text(self, path: Path, text: str) -> bool: ...


@dataclass
class Diff:
    path: str
    old_text: str | None
    new_text: str


@dataclass
class ToolResult:
    content: dict[str, Any] | str
    is_error: bool = False
    diff: Diff | None = None
    images: list[ImagePart] = field(default_factory=list)
    """Images for the model (e.g. a screenshot); `content` should mention them in words too."""


@dataclass
class ToolContext:
    """What a running tool may touch: the workspace, per-session file state, live output."""

    cwd: Path
    session_id: str = ""
    read_times: dict[Path, float] = field(default_factory=dict)
    env: dict[str, str] | None = None
    environ: Mapping[str, str] | None = None
    """The environment commands start from (its secrets held back, `env` over it): the
    connection's on a listening server; None: this process's."""
    sink: Any = None
    """The running turn's `TurnSink` (events, questions); set by the engine for each turn."""
    state: dict[str, Any] = field(default_factory=dict)
    """Per-session tool state that resume needs (e.g. the todo list)."""
    config: dict[str, Any] = field(default_factory=dict)
    """The session's merged configuration (e.g. `webFetch`, `webSearch`)."""
    judged: dict[Path, Path] = field(default_factory=dict)
    """Real paths the permission check judged, by the path as written: the file tools open
    exactly those (`server.tools.disk`)."""
    sandbox: Sandbox | None = None
    """Where commands run (`server.tools.sandbox`); None: on the machine itself."""
    shared: set[Path] = field(default_factory=set)
    """Those of `judged` that already had more than one hard link when judged (the check asked
    about them); a write finding another one linked is refused."""
    files: FileAccess | None = None
    """Where file tools read and write first, e.g. the editor's buffers over ACP."""
    checkpoints: Checkpoints | None = None
    """Where the file tools keep what they change, for `session/rewind`; None: not kept."""

    def resolve(self, path: str) -> Path:
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.cwd / p

    def inside_workspace(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.cwd.resolve())
        except (ValueError, OSError, RuntimeError):
            return False
        return True


class Tool(ABC):
    # Set on the class by built-in tools, on the instance by tools found at run time (MCP).
    name: str
    description: str
    Input: type[ToolInput]
    read_only: bool = False
    kind: ToolKind = "other"
    risk: ClassVar[Risk] = "low"
    shell: ClassVar[bool] = False
    """Runs `args.command` through a shell: the policy parses it (`server.policy.shell`)."""

    def title(self, args: Any) -> str:
        return self.name

    def is_read_only(self, args: Any) -> bool:
        """Whether this call changes nothing; tools whose calls differ (git) override it."""
        return self.read_only

    def call_risk(self, args: Any) -> Risk:
        """How much harm this call can do; tools whose calls differ (git) override it."""
        return self.risk

    def paths(self, args: Any) -> list[str]:
        """Filesystem paths the call touches (workspace confinement, editor locations)."""
        return []

    async def propose(self, ctx: ToolContext, args: Any) -> Diff | None:
        """The whole-file change the call would make, for the user to review (and change)
        before it runs; None for tools that change no file."""
        return None

    def always_ask(self, args: Any) -> str | None:
        """A reason to ask the user whatever the permission mode, or None."""
        return None

    @abstractmethod
    async def run(self, ctx: ToolContext, args: Any) -> ToolResult | dict[str, Any] | str:
        """Do the work; raise `ToolError` with a message the model can act on."""

    def spec(self) -> dict[str, Any]:
        """The tool as the model sees it (name, description, JSON Schema of the input)."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": input_schema(self.Input),
        }


@cache
def input_schema(model: type[ToolInput]) -> dict[str, Any]:
    # Schema generation costs milliseconds per tool; the loop asks for it on every model call.
    return model.model_json_schema()


def render(content: dict[str, Any] | str, cap: int = RESULT_CAP) -> str:
    """Serialize a tool result for the model, capped with a marker that says how to narrow."""
    if isinstance(content, str):
        text = content
    else:
        text = json.dumps(content, ensure_ascii=False, default=str)
    if len(text) <= cap:
        return text
    cut = len(text) - cap
    return (
        text[:cap]
        + f"\n[output truncated: {cut} of {len(text)} characters omitted; narrow the request "
        "(offset/limit, a more specific pattern or path) to see the rest]"
    )

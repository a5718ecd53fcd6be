"""What stream-json accepts on stdin, as pydantic models: every line is validated before it is
acted on, so a wrongly typed line is an error frame, never an exception in the door."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter, ValidationError

from server.frontends.stdio import parse_json


class Loose(BaseModel):
    """Claude Code sends more fields than agentls reads: unknown ones are kept, not refused."""

    model_config = ConfigDict(extra="allow")


class TextBlock(Loose):
    type: Literal["text"]
    text: str


class ImageSource(Loose):
    type: str
    data: str = ""
    media_type: str = ""


class ImageBlock(Loose):
    type: Literal["image"]
    source: ImageSource


class OtherBlock(Loose):
    """tool_result, document, ...: accepted and not used."""

    type: str


def _block_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("text", "image") else "other"


Block = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ImageBlock, Tag("image")]
    | Annotated[OtherBlock, Tag("other")],
    Discriminator(_block_tag),
]


class UserMessage(Loose):
    role: str = "user"
    content: str | list[Block] = ""


class UserLine(Loose):
    type: Literal["user"]
    message: UserMessage
    uuid: str | None = None


class ControlRequestBody(Loose):
    subtype: str
    mode: str | None = None
    model: str | None = None
    user_message_id: str | None = None
    dry_run: bool = False


class ControlRequestLine(Loose):
    type: Literal["control_request"]
    request_id: str
    request: ControlRequestBody


class ControlResponseBody(Loose):
    subtype: str
    request_id: str
    response: dict[str, Any] | None = None
    error: str | None = None


class ControlResponseLine(Loose):
    type: Literal["control_response"]
    response: ControlResponseBody


class IgnoredLine(Loose):
    type: Literal["control_cancel_request", "keep_alive"]


Line = Annotated[
    UserLine | ControlRequestLine | ControlResponseLine | IgnoredLine, Discriminator("type")
]
LINE = TypeAdapter(Line)


class ToolAnswer(Loose):
    """The host's answer to a `can_use_tool` control request."""

    behavior: str | None = None
    updatedInput: dict[str, Any] | None = None
    updatedPermissions: Any = None
    message: str | None = None
    interrupt: bool | None = None


def parse_line(raw: bytes) -> Line:
    """One stdin line as a model; ValueError says what is wrong with it."""
    try:
        data = parse_json(raw)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        return LINE.validate_python(data)
    except ValidationError as exc:
        raise ValueError(describe(exc)) from None


def tool_answer(raw: dict[str, Any]) -> ToolAnswer:
    try:
        return ToolAnswer.model_validate(raw)
    except ValidationError as exc:
        return ToolAnswer(behavior="deny", message=f"unusable answer: {describe(exc)}")


def describe(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in e['loc']) or '(line)'}: {e['msg']}" for e in exc.errors()[:5]
    ]
    return "; ".join(problems)


def prompt_blocks(content: str | list[Block]) -> list[dict[str, Any]]:
    """Claude Code user content (a string or blocks) as our prompt content blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks = []
    for block in content:
        if isinstance(block, TextBlock) and block.text:
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock) and block.source.type == "base64":
            source = block.source
            blocks.append({"type": "image", "data": source.data, "mimeType": source.media_type})
    return blocks

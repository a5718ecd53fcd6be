"""Prompt content blocks (ACP-shaped)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from protocol.base import WireModel

ContextKind = Literal["selection", "file", "diagnostics", "terminal"]
"""What an attached resource is: the editor's selection, a whole file, the current problems
(diagnostics), a terminal's recent output."""


class TextContent(WireModel):
    """Plain text typed by the user."""

    type: Literal["text"] = "text"
    text: str


class ImageContent(WireModel):
    """An attached image, base64 encoded."""

    type: Literal["image"] = "image"
    data: str
    """Base64 data without the `data:` prefix."""
    mime_type: str
    """image/png, image/jpeg, image/gif or image/webp."""


class Position(WireModel):
    """A place in a text document, 0-based (an LSP `Position`)."""

    line: int = Field(ge=0)
    character: int = Field(default=0, ge=0)


class Range(WireModel):
    """A span of a text document, 0-based, `end` exclusive (an LSP `Range`)."""

    start: Position
    end: Position


class ResourceLink(WireModel):
    """A reference to a file the user attached by path or URI; the model is told where it is
    and reads it with its tools if it needs to."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str | None = None
    mime_type: str | None = None
    range: Range | None = None
    """The part of the file meant (e.g. the selection)."""
    context: ContextKind | None = None


class ResourceContent(WireModel):
    """Text the editor attached with the prompt (a selection, a file, the problems, terminal
    output): the model gets it as clearly delimited context with its path and line range."""

    type: Literal["resource"] = "resource"
    uri: str
    text: str
    mime_type: str | None = None
    name: str | None = None
    range: Range | None = None
    """Where `text` is in the file the URI names (e.g. the selection)."""
    context: ContextKind | None = None


ContentBlock = Annotated[
    TextContent | ImageContent | ResourceLink | ResourceContent, Field(discriminator="type")
]

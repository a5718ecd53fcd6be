"""Prompt content blocks (ACP-shaped)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from protocol.base import WireModel


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


class ResourceLink(WireModel):
    """A reference to a file the user attached by path or URI."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str | None = None


ContentBlock = Annotated[TextContent | ImageContent | ResourceLink, Field(discriminator="type")]

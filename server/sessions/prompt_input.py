"""A prompt's content blocks as the engine's turn input: text, images, and the context the
editor attached (selections, files, problems, terminal output) as clearly delimited blocks that
name the file and its lines."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from protocol.content import (
    ContentBlock,
    ImageContent,
    Range,
    ResourceContent,
    ResourceLink,
    TextContent,
)
from protocol.methods import PromptParams
from server.providers.images import IMAGE_TYPES
from server.providers.messages import ImagePart
from server.turn import TurnInput

LINES_FRAGMENT = re.compile(r"^L(\d+)(?:[:-]L?(\d+))?$")
"""`#L12` or `#L12:20` / `#L12-L20` (1-based lines) after a file URI, as some editors write a
selection's place."""


CONTEXT_TAG = re.compile(r"<(?=\s*/?\s*context\b)", re.IGNORECASE)
"""Where a body spells a `<context>` tag, in any case and spacing."""


PROMPT_BYTES = 8 * 1024 * 1024
"""The largest prompt (its text, attached context and images) a session takes, unless the user
config's `limits.promptBytes` says otherwise."""


def oversized(params: PromptParams, config: dict[str, Any]) -> str | None:
    """Why the prompt is too large to take, or None."""
    return too_large(sum(_size(block) for block in params.prompt), config)


def too_large(size: int, config: dict[str, Any]) -> str | None:
    """Why a prompt (or steer) of `size` bytes is too large to take, or None."""
    limit = (config.get("limits") or {}).get("promptBytes") or PROMPT_BYTES
    if size <= limit:
        return None
    return (
        f"the prompt is {size / 1048576:.1f} MB, over the limit of {limit} bytes "
        "(limits.promptBytes in the user config): attach large files by reference instead"
    )


def _size(block: ContentBlock) -> int:
    if isinstance(block, ImageContent):
        return len(block.data)
    text = getattr(block, "text", None)
    return len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else 0


class BadPrompt(Exception):
    """The prompt cannot be run as given (e.g. an unsupported image type)."""


def to_turn_input(turn_id: str, params: PromptParams, cwd: Path) -> TurnInput:
    texts: list[str] = []
    typed: list[tuple[int, int]] = []
    images: list[ImagePart] = []
    for block in params.prompt:
        if isinstance(block, TextContent):
            start = sum(len(t) + 1 for t in texts)
            typed.append((start, start + len(block.text)))
            texts.append(block.text)
        elif isinstance(block, ImageContent):
            if block.mime_type not in IMAGE_TYPES:
                raise BadPrompt(
                    f"unsupported image type {block.mime_type}; use one of {', '.join(IMAGE_TYPES)}"
                )
            images.append(ImagePart(f"data:{block.mime_type};base64,{block.data}"))
        else:
            texts.append(context_text(block, cwd))
    options = params.options
    return TurnInput(
        turn_id=turn_id,
        text="\n".join(texts),
        typed=tuple(typed),
        images=images,
        images_first=bool(params.prompt) and isinstance(params.prompt[0], ImageContent),
        model=options.model if options else None,
        think=options.think if options else None,
        thinking_budget=options.thinking_budget if options else None,
        provider_options=options.provider_options if options else None,
    )


def steer_text(blocks: list[ContentBlock], cwd: Path) -> str:
    """A steer's blocks as the one user message it becomes (images are not taken mid-turn)."""
    parts = []
    for block in blocks:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ResourceLink | ResourceContent):
            parts.append(context_text(block, cwd))
    return "\n".join(parts)


def context_text(block: ResourceLink | ResourceContent, cwd: Path) -> str:
    """The block as the model reads it: a `<context>` element with the kind, the path (relative
    to the workspace when inside it) and the 1-based line span; a link has no body. A block
    with a line span and no kind is a selection."""
    lines = line_span(block.range, block.uri)
    kind = block.context or ("selection" if lines else "file")
    attrs = {"kind": kind, "path": display_path(block.uri, cwd)}
    if lines:
        attrs["lines"] = lines
    if isinstance(block, ResourceLink):
        attrs["attached"] = "by reference; read it if you need it"
        return f"<context {_attributes(attrs)} />"
    # The body must not be able to close the element it is in, nor open another.
    body = CONTEXT_TAG.sub("<\\\\", block.text)
    return f"<context {_attributes(attrs)}>\n{body}\n</context>"


def label(block: ContentBlock, cwd: Path) -> str | None:
    """How the journal and search show an attached resource: `@path:lines (kind)`."""
    if not isinstance(block, ResourceLink | ResourceContent):
        return None
    name = block.name or display_path(block.uri, cwd)
    lines = line_span(block.range, block.uri)
    place = f"@{name}:{lines}" if lines else f"@{name}"
    return f"{place} ({block.context})" if block.context and block.context != "file" else place


def line_span(span: Range | None, uri: str = "") -> str | None:
    """`a-b` (1-based, inclusive) for a range, or the URI's `#L` fragment; None for neither."""
    if span is not None:
        first = span.start.line + 1
        last = span.end.line + (1 if span.end.character > 0 else 0)
        last = max(first, last)
        return str(first) if first == last else f"{first}-{last}"
    match = LINES_FRAGMENT.match(urlsplit(uri).fragment) if "#" in uri else None
    if not match:
        return None
    start, end = match.group(1), match.group(2)
    return start if end is None or end == start else f"{start}-{end}"


def uri_path(uri: str) -> str:
    """A file URI's path (percent-decoded, fragment dropped); any other URI as it is."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return unquote(parts.path)
    if not parts.scheme:
        return uri.split("#", 1)[0]
    return uri


def display_path(uri: str, cwd: Path) -> str:
    path = uri_path(uri)
    try:
        return Path(path).relative_to(cwd).as_posix()
    except ValueError:
        return path


def _attributes(attrs: dict[str, str]) -> str:
    return " ".join(f'{k}="{_quote(v)}"' for k, v in attrs.items())


def _quote(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")

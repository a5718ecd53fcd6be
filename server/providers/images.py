"""Images: paths detected in prompt text, loading, each provider's wire shape, vision routing.

Detection finds a double-quoted path, a single-quoted path or a bare token ending in
png/jpg/jpeg/gif/webp, followed by the end of the text, whitespace or one of `) ] ' " ,`.
A token resolves to the first existing file among: the text as written (relative to the
workspace), Git-Bash `/c/x` as `C:/x`, `~` as home, a decoded `file://` URI (`/C:/x` loses its
slash). Other URLs and `data:` are skipped; missing files stay in the text. At most `MAX_IMAGES`
per message, explicit attachments first, deduplicated; detected paths beyond the cap stay in the
text, so the model still sees them. `AGENTLS_AUTO_IMAGE=0` (or `CC_AUTO_IMAGE=0`) turns
detection off.
"""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from server.providers import catalog
from server.providers.messages import ImagePart, Message, Part, TextPart, ToolResultPart

MAX_IMAGES = 8
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
IMAGE_ONLY_TEXT = "Please look at the attached image(s)."
UNSEEN = "omitted: the current model cannot read images"
OMITTED = f"[image, {UNSEEN}]"
"""The note for an image of unknown name and size that no model has read."""

_EXT = r"\.(?:png|jpe?g|gif|webp)"
_PATH = re.compile(
    rf'"(?P<dq>[^"\n]+?{_EXT})"'
    rf"|'(?P<sq>[^'\n]+?{_EXT})'"
    rf"|(?<![^\s(\[])(?P<bare>[^\s\"'(\[][^\s\"']*?{_EXT})(?=$|[\s)\]'\",])",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]+://", re.IGNORECASE)
_GIT_BASH = re.compile(r"^/([a-zA-Z])/(.*)$")
_DRIVE = re.compile(r"^[a-zA-Z]:[\\/]")
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class ImageError(Exception):
    """An image cannot be used (unsupported type, unreadable, no model can see it)."""


@dataclass(frozen=True)
class Found:
    """A detected image path: where it is in the text (quotes included) and the file it names."""

    start: int
    end: int
    path: Path


def auto_detect_enabled(environ: Mapping[str, str]) -> bool:
    value = environ.get("AGENTLS_AUTO_IMAGE", environ.get("CC_AUTO_IMAGE", "1"))
    return value.strip().lower() not in ("0", "false", "off", "no")


def candidates(token: str, *, home: Path) -> list[str]:
    """The spellings a path token may stand for, in the order they are tried."""
    if token.lower().startswith("data:"):
        return []
    if token.lower().startswith("file://"):
        path = unquote(token[7:])
        if path.lower().startswith("localhost/"):
            path = path[9:]
        return [path[1:] if re.match(r"^/[a-zA-Z]:[\\/]", path) else path]
    if _SCHEME.match(token):
        return []
    out = [token]
    if match := _GIT_BASH.match(token):
        out.append(f"{match[1].upper()}:/{match[2]}")
    if token.startswith(("~/", "~\\")):
        out.append(str(home / token[2:]))
    return out


def _as_path(spelling: str, cwd: Path) -> Path:
    path = Path(spelling)
    if path.is_absolute() or _DRIVE.match(spelling):
        return path
    return cwd / path


def find(text: str, *, cwd: Path, home: Path) -> list[Found]:
    """Image paths in `text` that name existing files, in order of appearance."""
    found = []
    for match in _PATH.finditer(text):
        token = match["dq"] or match["sq"] or match["bare"]
        for spelling in candidates(token, home=home):
            path = _as_path(spelling, cwd)
            if path.is_file():
                found.append(Found(match.start(), match.end(), path))
                break
    return found


def strip(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the spans; runs of spaces collapse and the ends are trimmed."""
    if not spans:
        return text
    kept, last = [], 0
    for start, end in sorted(spans):
        kept.append(text[last:start])
        last = end
    kept.append(text[last:])
    return re.sub(r"[ \t]{2,}", " ", "".join(kept)).strip()


def sniff(data: bytes) -> str | None:
    """The image type from the file's first bytes (extensions lie)."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def load(path: Path) -> ImagePart:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageError(f"cannot read image {path}: {exc.strerror or exc}") from exc
    mime = sniff(data)
    if mime is None:
        raise ImageError(f"{path}: unsupported image type; use PNG, JPEG, GIF or WebP")
    return ImagePart(f"data:{mime};base64,{base64.b64encode(data).decode()}", name=path.name)


def dimensions(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header; None when it cannot be read."""
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        if data[:6] in (b"GIF87a", b"GIF89a"):
            return struct.unpack("<HH", data[6:10])
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data.startswith(b"\xff\xd8"):
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    kind = data[12:16]
    if kind == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        return width, int.from_bytes(data[27:30], "little") + 1
    if kind == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2 : at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def note(part: ImagePart) -> str:
    """What a text-only model reads instead of an image: `[image shot.png, 64x48, seen by m]`."""
    try:
        size = dimensions(base64.b64decode(part.base64[:65536], validate=False))
    except (ValueError, IndexError):
        size = None
    facts = [
        f"image {part.name}" if part.name else "image",
        f"{size[0]}x{size[1]}" if size else None,
    ]
    facts.append(f"seen by {part.seen_by}" if part.seen_by else UNSEEN)
    return "[" + ", ".join(f for f in facts if f) + "]"


def check(part: ImagePart) -> ImagePart:
    if not part.data_url.startswith("data:") or ";base64," not in part.data_url:
        raise ImageError("an attached image must be a base64 data URL")
    if part.mime_type not in IMAGE_TYPES:
        raise ImageError(
            f"unsupported image type {part.mime_type}; use one of {', '.join(IMAGE_TYPES)}"
        )
    return part


def collect(
    text: str, attachments: list[ImagePart], *, cwd: Path, home: Path, detect: bool = True
) -> tuple[str, list[ImagePart]]:
    """The message text and its images: attachments first, then detected paths (removed from
    the text), deduplicated, at most `MAX_IMAGES`. Raises `ImageError` for unusable images."""
    parts: list[ImagePart] = []
    for part in attachments:
        if check(part).data_url not in {p.data_url for p in parts}:
            parts.append(part)
    parts = parts[:MAX_IMAGES]
    seen: set[Path] = set()
    spans = []
    for found in find(text, cwd=cwd, home=home) if detect else []:
        key = found.path.resolve()
        if key not in seen and len(parts) >= MAX_IMAGES:
            continue
        if key not in seen:
            seen.add(key)
            parts.append(load(found.path))
        spans.append((found.start, found.end))
    text = strip(text, spans)
    if parts and not text.strip():
        text = IMAGE_ONLY_TEXT
    return text, parts


def message_parts(
    text: str, pictures: list[ImagePart], *, images_first: bool = False
) -> list[Part]:
    """A user message's parts in the order the user gave them: text then images, or the
    images first when the prompt opened with one."""
    written: list[Part] = [TextPart(text)] if text else []
    shown: list[Part] = list(pictures)
    return shown + written if images_first else written + shown


# -- wire shapes ---------------------------------------------------------------------------------


def openai_block(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": part.data_url}}


def anthropic_block(part: ImagePart) -> dict[str, Any]:
    source = {"type": "base64", "media_type": part.mime_type, "data": part.base64}
    return {"type": "image", "source": source}


def ollama_images(parts: list[Part]) -> list[str]:
    """Ollama's native API takes bare base64 strings next to the text."""
    return [p.base64 for p in parts if isinstance(p, ImagePart)]


# -- vision routing -------------------------------------------------------------------------------


def has_images(messages: list[Message]) -> bool:
    """Whether any message holds an image, attached by the user or returned by a tool."""
    return any(
        isinstance(p, ImagePart) or (isinstance(p, ToolResultPart) and p.images)
        for m in messages
        for p in m.parts
    )


def without_images(messages: list[Message]) -> list[Message]:
    """The conversation with each image replaced by a short note, for text-only models. A tool
    result's images become the note at the end of its text."""
    if not has_images(messages):
        return messages
    return [Message(m.role, [_without_image(p) for p in m.parts]) for m in messages]


def _without_image(part: Part) -> Part:
    if isinstance(part, ImagePart):
        return TextPart(note(part))
    if isinstance(part, ToolResultPart) and part.images:
        notes = "\n".join(note(i) for i in part.images)
        return replace(part, content=f"{part.content}\n{notes}", images=[])
    return part


def mark_seen(messages: list[Message], model: str) -> None:
    """Record that `model` read the images not yet read by any (this turn's, when it is the
    vision model)."""
    for message in messages:
        for part in message.parts:
            pictures = part.images if isinstance(part, ToolResultPart) else [part]
            for picture in pictures:
                if isinstance(picture, ImagePart) and picture.seen_by is None:
                    picture.seen_by = model


def can_see(model: str, provider: str, configured: str | None) -> bool:
    """The configured vision model is trusted; otherwise the catalogue decides."""
    return model == configured or catalog.describe(model, provider).vision


def vision_target(
    model: str,
    provider: str,
    *,
    configured: str | None,
    new_images: bool,
    history_images: bool,
) -> str | None:
    """The model to switch to, or None to stay. A prompt with images goes to the configured
    vision model (`--vision-model` / `llm.visionModel`) if there is one, else to the catalogue's
    default when the current model cannot read images. A history holding images keeps a
    vision-capable model. Raises `ImageError` when a new image has nowhere to go."""
    if not (new_images or history_images):
        return None
    if new_images and configured and configured != model:
        return configured
    if can_see(model, provider, configured):
        return None
    target = configured or catalog.vision_default(provider)
    if target and target != model:
        return target
    if new_images:
        raise ImageError(
            f"model {model} cannot read images and {provider} has no default vision model; "
            "choose one with --vision-model (config key llm.visionModel)"
        )
    return None

"""edit_file_hashed: replace one line named by the tag a hashed read_file showed for it.

Only the anchored line changes; every other byte of the file is kept. The new line ends with the
file's dominant line ending (CRLF when most lines end in CRLF, else LF), or with nothing when it
was the last line and had no newline. A BOM on the first line is kept.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from .base import Diff, Tool, ToolContext, ToolError, ToolInput, ToolResult
from .files import byte_diff, crlf_dominant, js_trim, line_tag, read_for_edit, save_edit
from .path_text import PathText

BOM = "\ufeff"
SNIPPET_RADIUS = 3
MAX_LISTED = 10
SNIPPET_LINE_CHARS = 200


class EditFileHashedInput(ToolInput):
    path: PathText = Field(description="File to edit.")
    anchor_hash: str = Field(
        description="The 6-character tag shown before `|` for the line in read_file hashed: true."
    )
    expected_line: str = Field(
        description="The line's current text (without the `N: tag| ` prefix); compared with "
        "surrounding whitespace ignored."
    )
    new_line: str = Field(
        description="The replacement text for that one line, written verbatim (indentation "
        "included, no newline characters)."
    )


class EditFileHashed(Tool):
    """Replaces a single line chosen by its content tag, refusing stale or ambiguous anchors."""

    name = "edit_file_hashed"
    description = (
        "Replace exactly one line of a file. First read the file with read_file hashed: true; "
        "each line shows as `N: tag| text`. Pass that line's tag as anchor_hash, its text as "
        "expected_line and the replacement as new_line (a single line, written verbatim with "
        "its indentation). Errors start with a code: hash_mismatch (no line has the tag: the "
        "file changed, read it again with hashed: true), ambiguous_anchor (several lines have "
        "the tag: use edit_file with enough surrounding lines instead), content_mismatch (the "
        "tagged line's text differs from expected_line). Line endings and a BOM are kept."
    )
    Input = EditFileHashedInput
    kind = "edit"
    risk = "medium"

    def title(self, args: EditFileHashedInput) -> str:
        return f"Edit {args.path} (line {args.anchor_hash.strip()})"

    def paths(self, args: EditFileHashedInput) -> list[str]:
        return [args.path]

    async def propose(self, ctx: ToolContext, args: EditFileHashedInput) -> Diff | None:
        try:
            path, raw, data, _ = await self._edited(ctx, args)
        except ToolError:
            return None
        return byte_diff(path, raw, data)

    async def run(self, ctx: ToolContext, args: EditFileHashedInput) -> ToolResult:
        path, raw, data, number = await self._edited(ctx, args)
        await save_edit(ctx, path, data, before=raw)
        return ToolResult(
            content={"path": str(path), "line": number}, diff=byte_diff(path, raw, data)
        )

    async def _edited(
        self, ctx: ToolContext, args: EditFileHashedInput
    ) -> tuple[Path, bytes, bytes, int]:
        """The file, its bytes, its bytes with the line replaced, and the line's number."""
        if "\n" in args.new_line or "\r" in args.new_line:
            raise ToolError(
                "invalid_new_line: new_line must be a single line without newline characters; "
                "to change several lines use edit_file"
            )
        path = ctx.resolve(args.path)
        raw = await read_for_edit(ctx, path)
        # surrogateescape keeps bytes that are not UTF-8 intact through the round trip.
        text = raw.decode("utf-8", errors="surrogateescape")
        pieces = text.split("\n")
        lines = _lines(pieces)
        number = _find(path, lines, _anchor(args.anchor_hash), args.expected_line)
        if lines[number - 1].removeprefix(BOM) == args.new_line.removeprefix(BOM):
            raise ToolError(
                f"no_change: line {number} already reads new_line; there is nothing to change"
            )
        _replace(pieces, number, args.new_line, crlf=crlf_dominant(text))
        return path, raw, "\n".join(pieces).encode("utf-8", errors="surrogateescape"), number


def _anchor(value: str) -> str:
    """Tolerates a tag copied with its `|` separator or surrounding spaces."""
    return value.strip().removesuffix("|").strip()


def _lines(pieces: list[str]) -> list[str]:
    """The lines as read_file numbers them (line N at index N - 1), without their endings.

    A trailing newline starts no extra line. Undecodable bytes are kept as surrogates.
    """
    count = len(pieces) - 1 if pieces[-1] == "" else len(pieces)
    return [piece.removesuffix("\r") for piece in pieces[:count]]


def _readable(text: str) -> str:
    """The text as read_file shows it: undecodable bytes become U+FFFD."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _tag(text: str) -> str:
    try:
        return line_tag(text)
    except UnicodeEncodeError:
        return line_tag(_readable(text))


def _find(path: Path, lines: list[str], anchor: str, expected: str) -> int:
    """The number of the one line tagged `anchor` whose content is `expected`."""
    found = [i + 1 for i, line in enumerate(lines) if _tag(line) == anchor]
    if not found:
        raise ToolError(
            f"hash_mismatch: no line in {path} has the tag {anchor!r}. The file may have changed "
            "since you read it, or the tag was mistyped (tags are the 6 characters before `|`). "
            "Read the file again with read_file hashed: true and use a current tag."
        )
    if len(found) > 1:
        raise ToolError(_ambiguous(path, lines, anchor, found))
    number = found[0]
    current = _readable(lines[number - 1])
    if js_trim(current) != js_trim(expected):
        raise ToolError(
            f"content_mismatch: line {number} of {path} has the tag {anchor!r} but reads "
            f"{current!r}, not {expected!r} (compared with surrounding whitespace ignored). "
            "Check the line you mean and send its current text as expected_line."
        )
    return number


def _ambiguous(path: Path, lines: list[str], anchor: str, found: list[int]) -> str:
    numbers = ", ".join(str(n) for n in found)
    parts = [
        f"ambiguous_anchor: {len(found)} lines of {path} have the tag {anchor!r} (lines "
        f"{numbers}), so it does not say which one to change. Use edit_file with an old_string "
        "that includes neighbouring lines to make it unique."
    ]
    for number in found[:MAX_LISTED]:
        parts.append(_snippet(lines, number))
    if len(found) > MAX_LISTED:
        parts.append(f"({len(found) - MAX_LISTED} more not shown)")
    return "\n\n".join(parts)


def _snippet(lines: list[str], number: int) -> str:
    """Lines around `number` in hashed read_file form, the anchored one marked with `>`."""
    start = max(1, number - SNIPPET_RADIUS)
    end = min(len(lines), number + SNIPPET_RADIUS)
    rows = [f"line {number}:"]
    for n in range(start, end + 1):
        text = _readable(lines[n - 1])
        if n == 1:
            text = text.removeprefix(BOM)
        if len(text) > SNIPPET_LINE_CHARS:
            text = text[:SNIPPET_LINE_CHARS] + "…"
        mark = ">" if n == number else " "
        rows.append(f"{mark} {n}: {_tag(lines[n - 1])}| {text}")
    return "\n".join(rows)


def _replace(pieces: list[str], number: int, new_line: str, *, crlf: bool) -> None:
    index = number - 1
    if index == 0 and pieces[0].startswith(BOM) and not new_line.startswith(BOM):
        new_line = BOM + new_line
    terminated = index < len(pieces) - 1
    pieces[index] = new_line + ("\r" if terminated and crlf else "")

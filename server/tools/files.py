"""File tools: read_file, write_file, edit_file, list_dir, and the line tags of hashed reads.

`ctx.read_times` is keyed on the file's real path (`Path.resolve()`), so `a/../b.py`, `./b.py`
and a symlink to it share one freshness record.

When `ctx.files` is set (an ACP editor that serves its buffers), reads ask it first and writes
go to it first, falling back to the disk when it declines. Content the editor served has no
mtime: it is the buffer as it is now, so the freshness guard does not apply to it, and reading or
writing through the editor clears the file's freshness record.

A hashed read shows each line as `N: tag| text`. The tag is the first 6 characters of the
unpadded base64url SHA-256 of the line's UTF-8 with surrounding whitespace trimmed the way
JavaScript's `String.prototype.trim()` trims it; blank lines get `______`. edit_file_hashed
(`hashed.py`) anchors on these tags.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import stat
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from .base import Diff, Tool, ToolContext, ToolError, ToolInput, ToolResult
from .checkpoints import disk_bytes, keep_change
from .disk import make_parents, open_judged, read_judged, write_judged
from .path_text import PathText

BINARY_SNIFF = 8192
MAX_LINE_CHARS = 2000
LINE_READ = 4 * MAX_LINE_CHARS + 4
"""Bytes read of one line: the characters shown, in UTF-8 at its widest."""
MAX_DIR_ENTRIES = 1000
BLANK_TAG = "______"
# What JavaScript's trim() strips: WhiteSpace (incl. U+FEFF and category Zs) and LineTerminator.
# Python's str.strip() differs: it also strips U+001C-U+001F and U+0085, and keeps U+FEFF.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def line_tag(line: str) -> str:
    """The 6-character tag of one line (without its line ending)."""
    trimmed = js_trim(line)
    if not trimmed:
        return BLANK_TAG
    digest = hashlib.sha256(trimmed.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest)[:6].decode("ascii")


def real_path(path: Path) -> Path:
    """The key used in `ctx.read_times`; falls back to the lexical path on a symlink loop."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise ToolError(f"File not found: {path}") from None
    except OSError as e:
        raise ToolError(f"Cannot access {path}: {e.strerror or e}") from None


def _stat_file(path: Path) -> os.stat_result:
    st = _stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(
            f"{path} is a directory; use list_dir to see its entries or glob to find files in it"
        )
    if not stat.S_ISREG(st.st_mode):
        # Opening a FIFO or a device could block forever or never end.
        raise ToolError(f"{path} is not a regular file")
    return st


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head


def _binary_error(path: Path, size: int) -> ToolError:
    return ToolError(f"{path} is a binary file ({size} bytes); only text files can be read")


def _count_lines(f: BinaryIO) -> int:
    """Lines left in `f`, counted in chunks so a large file is never held in memory."""
    count, last = 0, b""
    while chunk := f.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (1 if last not in (b"", b"\n") else 0)


class Line(bytes):
    """A line as read: at most `LINE_READ` bytes of it, and its whole length (`size`)."""

    size: int


def _display(raw: bytes, number: int, *, hashed: bool = False) -> str:
    size = getattr(raw, "size", len(raw))
    text = raw.decode("utf-8", errors="replace").removesuffix("\n").removesuffix("\r")
    if size > len(raw):
        # The tag of its start only: a line this long is no anchor for edit_file_hashed.
        tag = f"{line_tag(text)}| " if hashed else ""
        return f"{number}: {tag}{text[:MAX_LINE_CHARS]}… [line truncated, {size} bytes]"
    tag = f"{line_tag(text)}| " if hashed else ""
    if number == 1:
        text = text.removeprefix("\ufeff")
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + f"… [line truncated, {len(text)} characters]"
    return f"{number}: {tag}{text}"


def _lines(f: BinaryIO) -> Iterator[bytes]:
    """`f`'s lines, each cut at `LINE_READ` bytes (a `Line` then, with its whole size), so one
    long line never sits in memory."""
    while head := f.readline(LINE_READ):
        if len(head) < LINE_READ or head.endswith(b"\n"):
            yield head
            continue
        size, last = len(head), head
        while chunk := f.readline(1 << 20):
            size, last = size + len(chunk), chunk
            if chunk.endswith(b"\n"):
                break
        size -= 2 if last.endswith(b"\r\n") else 1 if last.endswith(b"\n") else 0
        line = Line(head)
        line.size = size
        yield line


class ReadFileInput(ToolInput):
    path: PathText = Field(description="File to read, relative to the workspace or absolute.")
    offset: int | None = Field(default=None, ge=1, description="First line to read (1-based).")
    limit: int = Field(default=2000, ge=1, description="Maximum number of lines to return.")
    hashed: bool = Field(
        default=False,
        description="Prefix each line with its 6-character tag (`N: tag| text`) for "
        "edit_file_hashed.",
    )


class ReadFile(Tool):
    """Reads a text file as numbered lines, streaming so large files are cheap to slice."""

    name = "read_file"
    description = (
        "Read a text file. Returns lines numbered `N: text` plus totalLines, startLine and endLine. "
        "Reads at most `limit` lines (default 2000) starting at `offset` (1-based); for long files "
        "read the part you need, e.g. after locating it with grep. Lines longer than 2000 "
        "characters are cut. Binary files and directories are refused (use list_dir or glob for "
        "directories). Read a file before editing it: edits to a file that changed on disk since "
        "you read it are refused. With hashed: true each line reads `N: tag| text`, where tag "
        "identifies the line's content (blank lines: ______); pass a tag and the line to "
        "edit_file_hashed to replace that single line."
    )
    Input = ReadFileInput
    read_only = True
    kind = "read"

    def title(self, args: ReadFileInput) -> str:
        if args.offset:
            return f"Read {args.path} (from line {args.offset})"
        return f"Read {args.path}"

    def paths(self, args: ReadFileInput) -> list[str]:
        return [args.path]

    async def run(self, ctx: ToolContext, args: ReadFileInput) -> dict:
        path = ctx.resolve(args.path)
        start = args.offset or 1
        served = await editor_text(ctx, path)
        if served is not None:
            data = served.encode("utf-8", errors="replace")
            lines, total = _slice(io.BytesIO(data), path, len(data), start, args.limit)
        else:
            st = _stat_file(path)
            try:
                with open_judged(ctx, path, os.O_RDONLY) as f:
                    lines, total = _slice(f, path, st.st_size, start, args.limit)
            except OSError as e:
                raise ToolError(f"Cannot read {path}: {e.strerror or e}") from None
        if start > total and start > 1:
            raise ToolError(
                f"offset {start} is past the end of {args.path} (totalLines {total}); "
                "use a smaller offset"
            )
        if served is None:
            ctx.read_times[real_path(path)] = st.st_mtime
        else:
            ctx.read_times.pop(real_path(path), None)
        result = {
            "content": "\n".join(
                _display(raw, start + i, hashed=args.hashed) for i, raw in enumerate(lines)
            ),
            "totalLines": total,
            "startLine": start,
            "endLine": start + len(lines) - 1,
        }
        if total == 0:
            result["note"] = "The file is empty."
        return result


def _slice(f: BinaryIO, path: Path, size: int, start: int, limit: int) -> tuple[list[bytes], int]:
    """Up to `limit` raw lines from line `start` on, and the total number of lines."""
    if _is_binary(f.read(BINARY_SNIFF)):
        raise _binary_error(path, size)
    f.seek(0)
    lines = _lines(f)
    skipped = sum(1 for _ in islice(lines, start - 1))
    kept = list(islice(lines, limit))
    return kept, skipped + len(kept) + _count_lines(f)


async def editor_text(ctx: ToolContext, path: Path) -> str | None:
    """The file's text as `ctx.files` (the editor) has it, or None to read the disk."""
    if ctx.files is None:
        return None
    return await ctx.files.read_text(ctx.judged.get(path, path))


async def editor_write(ctx: ToolContext, path: Path, text: str) -> bool:
    """Write through `ctx.files` (the editor); False when the disk must be written instead."""
    if ctx.files is None:
        return False
    return bool(await ctx.files.write_text(ctx.judged.get(path, path), text))


class WriteFileInput(ToolInput):
    path: PathText = Field(description="File to create or overwrite.")
    content: str = Field(description="The complete new content, written verbatim as UTF-8.")


class WriteFile(Tool):
    """Creates or overwrites a file with the given content."""

    name = "write_file"
    description = (
        "Create a file or replace its whole content. Parent directories are created. The content "
        "is written verbatim as UTF-8 (no newline is added). Returns the path and the number of "
        "bytes written. To change part of an existing file prefer edit_file."
    )
    Input = WriteFileInput
    kind = "edit"
    risk = "medium"

    def title(self, args: WriteFileInput) -> str:
        return f"Write {args.path}"

    def paths(self, args: WriteFileInput) -> list[str]:
        return [args.path]

    async def propose(self, ctx: ToolContext, args: WriteFileInput) -> Diff | None:
        path = ctx.resolve(args.path)
        return Diff(str(path), await _old_text(ctx, path), args.content)

    async def run(self, ctx: ToolContext, args: WriteFileInput) -> ToolResult:
        path = ctx.resolve(args.path)
        if path.exists():
            _stat_file(path)
        try:
            data = args.content.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ToolError(f"content is not valid Unicode: {e}") from None
        old = await _old_text(ctx, path)
        before = disk_bytes(ctx, path) if path.exists() else None
        if await editor_write(ctx, path, args.content):
            ctx.read_times.pop(real_path(path), None)
        else:
            try:
                make_parents(ctx, path)
                write_judged(ctx, path, data)
                ctx.read_times[real_path(path)] = path.stat().st_mtime
            except OSError as e:
                raise ToolError(f"Cannot write {path}: {e.strerror or e}") from None
        keep_change(ctx, path, before, data)
        return ToolResult(
            content={"path": str(path), "bytes": len(data)},
            diff=Diff(path=str(path), old_text=old, new_text=args.content),
        )


async def _old_text(ctx: ToolContext, path: Path) -> str | None:
    served = await editor_text(ctx, path)
    if served is not None:
        return served
    try:
        return read_judged(ctx, path).decode("utf-8", errors="replace")
    except (OSError, ToolError):
        return None


class EditFileInput(ToolInput):
    path: PathText = Field(description="File to edit.")
    old_string: str = Field(description="Exact text to replace, including whitespace.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class EditFile(Tool):
    """Replaces an exact string in a file, with a freshness guard against stale reads.

    Editing a file the agent never read is allowed: the model often knows the text from grep or
    from its own earlier write, and the exact-match rule already prevents blind edits. The guard
    only refuses when the agent's last read is older than the file on disk.
    """

    name = "edit_file"
    description = (
        "Replace `old_string` with `new_string` in a file. `old_string` must match the file "
        "exactly, whitespace and indentation included, and must be unique unless replace_all is "
        "true; include a few surrounding lines to make it unique. Line endings need not match: on "
        "a CRLF file send LF text and CRLF is kept. If the file changed on disk since you read it "
        "the edit is refused: read it again. If `old_string` is absent but `new_string` is already "
        "present the edit is reported as alreadyApplied and nothing is written."
    )
    Input = EditFileInput
    kind = "edit"
    risk = "medium"

    def title(self, args: EditFileInput) -> str:
        return f"Edit {args.path}"

    def paths(self, args: EditFileInput) -> list[str]:
        return [args.path]

    async def propose(self, ctx: ToolContext, args: EditFileInput) -> Diff | None:
        try:
            path, raw, data, _ = await self._edited(ctx, args)
        except ToolError:
            return None
        return None if data is None else byte_diff(path, raw, data)

    async def run(self, ctx: ToolContext, args: EditFileInput) -> ToolResult | dict:
        path, raw, data, count = await self._edited(ctx, args)
        if data is None:
            return {"path": str(path), "replacements": 0, "alreadyApplied": True}
        await save_edit(ctx, path, data, before=raw)
        return ToolResult(
            content={"path": str(path), "replacements": count if args.replace_all else 1},
            diff=byte_diff(path, raw, data),
        )

    async def _edited(
        self, ctx: ToolContext, args: EditFileInput
    ) -> tuple[Path, bytes, bytes | None, int]:
        """The file, its bytes, its bytes after the edit (None: already applied), and how many
        times `old_string` matched."""
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are identical; there is nothing to change")
        if not args.old_string:
            raise ToolError("old_string is empty; use write_file to create or overwrite a file")
        path = ctx.resolve(args.path)
        raw = await read_for_edit(ctx, path)
        # surrogateescape keeps bytes that are not UTF-8 intact through the round trip.
        text = raw.decode("utf-8", errors="surrogateescape")
        old, new = _match_eol(text, args.old_string, args.new_string)
        count = text.count(old)
        if count == 0:
            if new and new in text:
                return path, raw, None, 0
            raise ToolError(_not_found(path, text, old))
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string matches {count} times in {path}; include more surrounding lines to "
                "make it unique, or set replace_all to replace every occurrence"
            )
        updated = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
        return path, raw, updated.encode("utf-8", errors="surrogateescape"), count


def byte_diff(path: Path, before: bytes, after: bytes) -> Diff:
    """An edit's whole-file change as text (bytes that are not UTF-8 shown as U+FFFD)."""
    return Diff(
        str(path), before.decode("utf-8", errors="replace"), after.decode("utf-8", errors="replace")
    )


async def read_for_edit(ctx: ToolContext, path: Path) -> bytes:
    """The file's bytes, refusing directories, binary files and files changed since the last read.

    Text served by the editor (`ctx.files`) is its live buffer and has no mtime, so the
    freshness check is skipped for it; the exact-match rules of the edit tools still apply.
    """
    served = await editor_text(ctx, path)
    if served is not None:
        raw = served.encode("utf-8", errors="replace")
    else:
        st = _stat_file(path)
        read_at = ctx.read_times.get(real_path(path))
        if read_at is not None and read_at != st.st_mtime:
            raise ToolError(
                f"{path} has been modified on disk since you last read it; "
                "read it again with read_file before editing"
            )
        try:
            raw = read_judged(ctx, path)
        except OSError as e:
            raise ToolError(f"Cannot read {path}: {e.strerror or e}") from None
    if _is_binary(raw[:BINARY_SNIFF]):
        raise _binary_error(path, len(raw))
    return raw


async def save_edit(ctx: ToolContext, path: Path, data: bytes, *, before: bytes) -> None:
    """Write an edited file (`before`: what it held) and record the new mtime so the next edit
    counts as fresh; the change is kept for rewind.

    Valid UTF-8 goes to the editor first (`ctx.files`); bytes that are not UTF-8 go to the disk.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and await editor_write(ctx, path, text):
        ctx.read_times.pop(real_path(path), None)
    else:
        try:
            write_judged(ctx, path, data)
            ctx.read_times[real_path(path)] = path.stat().st_mtime
        except OSError as e:
            raise ToolError(f"Cannot write {path}: {e.strerror or e}") from None
    keep_change(ctx, path, before, data)


def crlf_dominant(text: str) -> bool:
    """More lines end in CRLF than in a bare LF."""
    crlf = text.count("\r\n")
    return crlf > text.count("\n") - crlf


def _match_eol(text: str, old: str, new: str) -> tuple[str, str]:
    """Convert LF-only strings to CRLF when the file is CRLF-dominant."""
    if not crlf_dominant(text) or "\r" in old:
        return old, new
    return _to_crlf(old), _to_crlf(new)


def _to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _not_found(path: Path, text: str, old: str) -> str:
    message = (
        f"old_string was not found in {path}. It must match exactly, including whitespace, "
        "indentation (tabs vs spaces) and line breaks; read the file again and copy the text."
    )
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")
    for number, line in enumerate(text.splitlines(), 1):
        if first and line.strip() == first:
            return message + f" Line {number} matches its first line when whitespace is ignored."
    return message


class ListDirInput(ToolInput):
    path: PathText = Field(default=".", description="Directory to list.")


class ListDir(Tool):
    """Lists one directory level, directories marked with a trailing `/`."""

    name = "list_dir"
    description = (
        "List the entries of one directory (not recursive), sorted by name. Directories end with "
        "`/`; symlinks are shown as `name -> target`. At most 1000 entries are returned; use glob "
        "with a pattern to find specific files in large trees."
    )
    Input = ListDirInput
    read_only = True
    kind = "read"

    def title(self, args: ListDirInput) -> str:
        return f"List {args.path}"

    def paths(self, args: ListDirInput) -> list[str]:
        return [args.path]

    async def run(self, ctx: ToolContext, args: ListDirInput) -> dict:
        path = ctx.resolve(args.path)
        if not stat.S_ISDIR(_stat(path).st_mode):
            raise ToolError(f"{path} is a file, not a directory; use read_file to read it")
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            raise ToolError(f"Cannot list {path}: {e.strerror or e}") from None
        shown = [_entry(e) for e in entries[:MAX_DIR_ENTRIES]]
        result: dict = {"path": str(path), "entries": shown}
        if len(entries) > MAX_DIR_ENTRIES:
            result["note"] = (
                f"showing {MAX_DIR_ENTRIES} of {len(entries)} entries; use glob to narrow"
            )
        return result


def _entry(entry: os.DirEntry) -> str:
    try:
        is_dir = entry.is_dir()
    except OSError:  # a symlink loop
        is_dir = False
    name = entry.name + ("/" if is_dir else "")
    if not entry.is_symlink():
        return name
    try:
        target = os.readlink(entry.path)
    except OSError:
        target = "?"
    broken = "" if os.path.exists(entry.path) else " (broken)"
    return f"{name} -> {target}{broken}"

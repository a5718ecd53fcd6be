"""Search tools backed by ripgrep: grep (content) and glob (file names).

ripgrep is run with `--no-require-git` so `.gitignore` files are honoured even outside a git
checkout, and with the search root as its working directory so `--glob` patterns are relative to
the root the model named.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from pydantic import Field

from server.aio import run_to_end

from .base import Tool, ToolContext, ToolError, ToolInput
from .path_text import PathText
from .spawn import marked, started

MAX_MATCHES = 100
MAX_PER_FILE = 10
MAX_TRUNCATED_FILES = 20
MAX_LINE_CHARS = 200
LINE_CAP = 256 * 1024
"""The most of one rg output line held; a longer one keeps its head and its line number."""
LINE_NUMBER = re.compile(rb'"line_number":(\d+)')
LONG_TEXT = re.compile(r'"lines":\{"text":"((?:[^"\\]|\\.){0,800})')
STDERR_CAP = 4000
COMMON_ARGS = ["--no-config", "--no-require-git"]
# Last, so they win over the model's globs and a repository's `.ignore` whitelists; a `.env`
# file named as the search path itself is searched (the permission policy asked first).
NO_SECRETS = ["--iglob", "!.env*"]


def rg_path() -> str:
    """The ripgrep binary shipped next to the interpreter (the `ripgrep` wheel), else on PATH."""
    bundled = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if bundled.is_file():
        return str(bundled)
    found = shutil.which("rg")
    if found:
        return found
    raise ToolError(
        "ripgrep (rg) is not installed; install the `ripgrep` package or put rg on PATH"
    )


async def run_rg(args: list[str], cwd: Path, on_line: Callable[[bytes], None]) -> tuple[int, str]:
    """Run rg, feeding each stdout line to `on_line`; returns (exit code, stderr).

    rg is killed if the caller is cancelled while it runs.
    """
    command = [rg_path(), *COMMON_ARGS, *args]
    spawn = anyio.open_process(command, cwd=cwd, env=marked(os.environ), stdin=subprocess.DEVNULL)
    proc = await started(spawn, close=_close)
    err = bytearray()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_collect, proc.stderr, err)
            await _split_lines(proc.stdout, on_line)
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
        await run_to_end(_close(proc))
    return code, err.decode("utf-8", errors="replace").strip()


async def _close(proc: Process) -> None:
    await proc.aclose()


async def _collect(stream: ByteReceiveStream | None, into: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        if len(into) < STDERR_CAP:
            into.extend(chunk[: STDERR_CAP - len(into)])


async def _split_lines(stream: ByteReceiveStream | None, on_line: Callable[[bytes], None]) -> None:
    if stream is None:
        return
    lines = _Lines(on_line)
    async for chunk in stream:
        lines.feed(chunk)
    lines.end()


class _Lines:
    """rg's stdout cut into lines, each held to `LINE_CAP` bytes: a longer one (a match in a
    very long line) is passed on as `LongLine`, its head and the line number read past it."""

    def __init__(self, on_line: Callable[[bytes], None]):
        self.on_line = on_line
        self.pending: list[bytes] = []
        self.held = 0
        self.long: LongLine | None = None
        self.tail = b""

    def feed(self, chunk: bytes) -> None:
        *complete, rest = chunk.split(b"\n")
        for part in complete:
            self._add(part)
            self._emit()
        if rest:
            self._add(rest)

    def end(self) -> None:
        if self.pending or self.long is not None:
            self._emit()

    def _add(self, part: bytes) -> None:
        if self.long is None and self.held + len(part) <= LINE_CAP:
            self.pending.append(part)
            self.held += len(part)
            return
        if self.long is None:
            self.long = LongLine(b"".join([*self.pending, part])[:LINE_CAP])
            self.pending, self.held = [], 0
        if self.long.line_number is None:
            if found := LINE_NUMBER.search(self.tail + part):
                self.long.line_number = int(found.group(1))
            self.tail = (self.tail + part)[-64:]

    def _emit(self) -> None:
        line: bytes = self.long if self.long is not None else b"".join(self.pending)
        self.pending, self.held, self.tail, self.long = [], 0, b"", None
        self.on_line(line)


class LongLine(bytes):
    """The head of an rg output line too long to hold, and its match's line number."""

    line_number: int | None = None


def display_path(ctx: ToolContext, path: Path) -> str:
    """Relative to the session cwd when inside it, else absolute; always with `/`."""
    try:
        return path.relative_to(ctx.cwd).as_posix()
    except ValueError:
        return path.as_posix()


def _search_root(ctx: ToolContext, path: str | None) -> Path:
    root = ctx.resolve(path or ".")
    if not root.exists():
        raise ToolError(f"Path not found: {root}")
    return root


class GrepInput(ToolInput):
    pattern: str = Field(description="Regular expression (Rust regex syntax) to search for.")
    path: PathText | None = Field(
        default=None, description="File or directory to search (default: cwd)."
    )
    glob: str | None = Field(default=None, description="Only search files matching, e.g. `*.py`.")
    caseSensitive: bool = Field(default=True, description="False for a case-insensitive search.")
    offset: int = Field(
        default=0, ge=0, description="Skip this many matching lines first (counted in file order)."
    )
    perFile: int = Field(
        default=MAX_PER_FILE,
        ge=1,
        le=MAX_MATCHES,
        description=f"Most matching lines shown per file (default {MAX_PER_FILE}).",
    )


class _File:
    """One file's matching lines: how many, how many skipped by `offset`, how many shown."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = self.skipped = self.shown = 0

    def cut(self) -> bool:
        return self.count > self.skipped + self.shown


class _Matches:
    """Accumulates rg `--json` messages into the grep result; every matching line is counted,
    only those past `offset` and within the caps are kept."""

    def __init__(self, ctx: ToolContext, base: Path, args: GrepInput) -> None:
        self.ctx, self.base = ctx, base
        self.offset, self.per_file = args.offset, args.perFile
        self.count = 0
        self.files: list[_File] = []
        self.matches: list[dict[str, Any]] = []
        self.resume: int | None = None
        """The offset that lists the first line left out (and none before it again)."""

    def feed(self, line: bytes) -> None:
        if line.startswith(b'{"type":"begin"'):
            self.files.append(_File(_begin_path(line)))
        elif line.startswith(b'{"type":"match"') and self.files:
            self._count(self.files[-1], line)

    def _count(self, file: _File, line: bytes) -> None:
        self.count += 1
        file.count += 1
        if self.count <= self.offset:
            file.skipped += 1
        elif file.shown < self.per_file and len(self.matches) < MAX_MATCHES:
            file.shown += 1
            data = _long_match(line) if isinstance(line, LongLine) else json.loads(line)["data"]
            self.matches.append(self._match(data))
        elif self.resume is None:
            self.resume = self.count - 1

    def _match(self, data: dict[str, Any]) -> dict[str, Any]:
        text = _text(data["lines"]).rstrip("\r\n")
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + "…"
        return {
            "file": display_path(self.ctx, self.base / _text(data["path"])),
            "line": data["line_number"],
            "content": text,
        }

    def result(self) -> dict[str, Any]:
        shown = len(self.matches)
        result: dict[str, Any] = {
            "matchCount": self.count,
            "filesWithMatches": len(self.files),
            "matches": self.matches,
            "truncated": self.count > self.offset + shown,
        }
        if result["truncated"]:
            cut = [f for f in self.files if f.cut()]
            result["truncatedFiles"] = [
                {"file": self._name(f), "matchCount": f.count, "shown": f.shown}
                for f in cut[:MAX_TRUNCATED_FILES]
            ]
            result["more"] = self._more(shown, len(cut))
        return result

    def _name(self, file: _File) -> str:
        return display_path(self.ctx, self.base / file.name)

    def _more(self, shown: int, cut_files: int) -> str:
        listed = ""
        if cut_files > MAX_TRUNCATED_FILES:
            listed = f" {cut_files} files were cut; truncatedFiles lists {MAX_TRUNCATED_FILES}."
        return (
            f"{shown} of {self.count} matching lines shown (at most {self.per_file} per file and "
            f"{MAX_MATCHES} in all).{listed} For more, call grep again with "
            f"offset={self.resume} to skip the lines already shown, or with a larger "
            f"perFile (up to {MAX_MATCHES}), or narrow it with path or glob."
        )


def _long_match(line: LongLine) -> dict[str, Any]:
    """What `_match` needs of a match whose line was too long to hold: its path, the start of
    its text, its line number."""
    head = line.decode("utf-8", errors="replace")
    path = re.search(r'"path":\{"text":"((?:[^"\\]|\\.)*)"', head)
    text = LONG_TEXT.search(head)
    return {
        "path": {"text": _json_text(path.group(1)) if path else "<unknown>"},
        "lines": {"text": _json_text(text.group(1)) + "…" if text else ""},
        "line_number": line.line_number,
    }


def _json_text(escaped: str) -> str:
    """A JSON string's body, which may end inside an escape (a `\\u00e9` cut short)."""
    for cut in range(7):
        try:
            return json.loads(f'"{escaped[: len(escaped) - cut]}"')
        except json.JSONDecodeError:
            continue
    return ""


def _begin_path(line: bytes) -> str:
    if isinstance(line, LongLine):  # a path longer than LINE_CAP: not one a model names
        return "<unknown>"
    return _text(json.loads(line)["data"]["path"])


def _text(field: dict[str, Any]) -> str:
    # rg sends non-UTF-8 data as base64 under "bytes"; show a placeholder rather than garbage.
    return field.get("text", "<non-UTF-8 data>")


class Grep(Tool):
    """Searches file contents with ripgrep."""

    name = "grep"
    description = (
        "Search file contents for a regular expression (ripgrep, Rust regex syntax) under `path` "
        "(default: the workspace). Honours .gitignore and skips hidden files and directories "
        "and `.env*` files. "
        "Returns {matchCount, filesWithMatches, matches: [{file, line, content}], truncated}: "
        "matchCount counts every matching line; at most 100 are listed in all and `perFile` "
        "(default 10, up to 100) per file, lines cut at 200 characters. When truncated, "
        "`truncatedFiles` gives each cut file's {file, matchCount, shown} and `more` says how "
        "to get the rest: `offset` skips that many matching lines (in file order), a larger "
        "`perFile` lists more of each file, and `path`, `glob` (e.g. `*.py`, `src/**/*.ts`) or "
        "a more specific pattern narrow the search. Count with matchCount, not the list."
    )
    Input = GrepInput
    read_only = True
    kind = "search"

    def title(self, args: GrepInput) -> str:
        where = f" in {args.path}" if args.path else ""
        return f"Grep `{args.pattern}`{where}"

    def paths(self, args: GrepInput) -> list[str]:
        return [args.path] if args.path else []

    async def run(self, ctx: ToolContext, args: GrepInput) -> dict[str, Any]:
        root = _search_root(ctx, args.path)
        cwd, target = (root, ".") if root.is_dir() else (root.parent, root.name)
        rg_args = ["--json", "--sort", "path"]
        if not args.caseSensitive:
            rg_args.append("--ignore-case")
        if args.glob:
            rg_args += ["--glob", args.glob]
        rg_args += [*NO_SECRETS, "--regexp", args.pattern, "--", target]
        found = _Matches(ctx, cwd, args)
        code, stderr = await run_rg(rg_args, cwd, found.feed)
        if code == 2 and found.count == 0:
            raise ToolError(f"grep failed: {stderr or 'ripgrep exited with status 2'}")
        return found.result()


class GlobInput(ToolInput):
    pattern: str = Field(description="Glob such as `*.py`, `src/**/*.ts` or `**/test_*.py`.")
    path: PathText | None = Field(default=None, description="Directory to search (default: cwd).")
    limit: int = Field(default=100, ge=1, description="Maximum number of files to return.")


class Glob(Tool):
    """Finds files by name pattern, newest first."""

    name = "glob"
    description = (
        "Find files whose path matches a glob, newest (most recently modified) first. A pattern "
        "without `/` matches file names at any depth (`*.py`); a pattern with `/` is relative to "
        "`path` (`src/**/*.ts`). Honours .gitignore and skips hidden directories, `.env*` files "
        "and node_modules (pass one as `path` to search inside it). Returns {files, totalFiles, "
        "truncated} with at most `limit` (default 100) files."
    )
    Input = GlobInput
    read_only = True
    kind = "search"

    def title(self, args: GlobInput) -> str:
        where = f" in {args.path}" if args.path else ""
        return f"Find `{args.pattern}`{where}"

    def paths(self, args: GlobInput) -> list[str]:
        return [args.path] if args.path else []

    async def run(self, ctx: ToolContext, args: GlobInput) -> dict[str, Any]:
        root = _search_root(ctx, args.path)
        if not root.is_dir():
            raise ToolError(f"{root} is not a directory; give a directory as path")
        found: list[Path] = []
        rg_args = ["--files", "--glob", args.pattern, "--glob", "!node_modules/", *NO_SECRETS]
        rg_args += ["--", "."]
        code, stderr = await run_rg(
            rg_args, root, lambda line: found.append(root / os.fsdecode(line.rstrip(b"\r")))
        )
        if code == 2 and not found:
            raise ToolError(f"glob failed: {stderr or 'ripgrep exited with status 2'}")
        newest = sorted(found, key=lambda p: (-_mtime(p), p.as_posix()))
        return {
            "files": [display_path(ctx, p) for p in newest[: args.limit]],
            "totalFiles": len(found),
            "truncated": len(found) > args.limit,
        }


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0

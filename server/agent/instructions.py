"""Standing instructions from files: the user's own (`~/.agentls/AGENTS.md`,
`~/.claude/CLAUDE.md`) and the project's `AGENTS.md` / `CLAUDE.md`, from the repository root
down to the session's folder, so the deeper (more specific) file is read last.

Only plain file names count (`instructions.files`: no folders, no `..`, no `.env*`), and a
project file is read only when its real path stays inside the repository (a symlinked
`AGENTS.md` pointing elsewhere is skipped).

Files are re-read only when they change (mtime and size), which keeps the per-call cost at a
few `stat`s. Together they are capped at `instructions.maxBytes`; what does not fit is cut with
a note saying so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any

from server.policy.paths import workspace_parts

log = logging.getLogger(__name__)

FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
USER_FILES = (Path(".agentls") / "AGENTS.md", Path(".claude") / "CLAUDE.md")
MAX_BYTES = 32 * 1024
HEADER = "## Instructions from AGENTS.md / CLAUDE.md files (follow them)"


@dataclass(frozen=True)
class InstructionFile:
    path: Path
    label: str
    """How the prompt names it: `~/...` for the user's files, workspace-relative otherwise."""
    text: str


def repository_root(cwd: Path) -> Path | None:
    """The nearest folder at or above `cwd` holding `.git` (a folder or a worktree file)."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return None


def candidate_files(
    cwd: Path, home: Path, names: tuple[str, ...] = FILE_NAMES, *, root: Path | None = None
) -> list[Path]:
    """Where instruction files may be, in reading order: the user's, then root to `cwd`."""
    files = [home / f for f in USER_FILES if f.name in names]
    root = root or repository_root(cwd) or cwd
    folders = [cwd, *cwd.parents]
    chain = list(reversed(folders[: folders.index(root) + 1])) if root in folders else [cwd]
    files += [folder / name for folder in chain for name in names]
    return files


@dataclass
class Instructions:
    """The instruction files of one workspace, cached by mtime and size."""

    cwd: Path
    home: Path
    names: tuple[str, ...] = FILE_NAMES
    max_bytes: int = MAX_BYTES
    _cache: dict[Path, tuple[tuple[int, int], str]] = field(default_factory=dict)

    @classmethod
    def from_config(cls, cwd: Path, home: Path, config: dict[str, Any]) -> Instructions:
        section = config.get("instructions") or {}
        names = tuple(n for n in section.get("files", FILE_NAMES) if plain_name(n))
        return cls(cwd, home, names=names, max_bytes=int(section.get("maxBytes", MAX_BYTES)))

    def files(self) -> list[InstructionFile]:
        """The files that exist, in reading order; a file whose text repeats an earlier one
        (CLAUDE.md as a copy of or link to AGENTS.md) is read once."""
        found: list[InstructionFile] = []
        seen: set[str] = set()
        root = repository_root(self.cwd) or self.cwd
        user = {self.home / f for f in USER_FILES}
        for path in candidate_files(self.cwd, self.home, self.names, root=root):
            try:
                stat = path.stat()
            except OSError:  # most candidates do not exist: one stat, no path resolution
                self._cache.pop(path, None)
                continue
            if not S_ISREG(stat.st_mode):
                continue
            if path not in user and workspace_parts(path, root) is None:
                log.warning("skipped instructions %s: it leads outside the workspace", path)
                continue
            text = self._read(path, (stat.st_mtime_ns, stat.st_size))
            if text is None or not text.strip() or text in seen:
                continue
            seen.add(text)
            found.append(InstructionFile(path, _label(path, root, self.home), text))
        return found

    def render(self) -> str:
        """The prompt section, or "" when there is no instruction file."""
        files = self.files()
        if not files:
            return ""
        parts, left = [HEADER], self.max_bytes
        for file in files:
            data = file.text.strip().encode()
            if len(data) > left:
                shown = data[: max(left, 0)].decode(errors="ignore")
                parts.append(f"### {file.label}\n\n{shown}\n[... cut: instruction files are "
                             f"limited to {self.max_bytes} bytes in all]")
                break
            parts.append(f"### {file.label}\n\n{data.decode()}")
            left -= len(data)
        return "\n\n".join(parts)

    def _read(self, path: Path, key: tuple[int, int]) -> str | None:
        cached = self._cache.get(path)
        if cached and cached[0] == key:
            return cached[1]
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            log.warning("cannot read instructions %s: %s", path, exc)
            return None
        self._cache[path] = (key, text)
        return text


def plain_name(name: Any) -> bool:
    """A file name in a folder, not a path that could reach elsewhere, nor a secrets file."""
    if not isinstance(name, str) or not name.strip():
        return False
    pure = Path(name)
    return len(pure.parts) == 1 and name not in (".", "..") and not name.lower().startswith(".env")


def _label(path: Path, root: Path, home: Path) -> str:
    for base, prefix in ((root, ""), (home, "~/")):
        if path.is_relative_to(base):
            return prefix + path.relative_to(base).as_posix()
    return path.as_posix()

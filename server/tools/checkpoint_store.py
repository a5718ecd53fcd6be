"""File checkpoints: before agentls's file tools change a file, what it held is kept, so a turn
can be undone (`session/rewind`). Never the user's git: a per-session log of the changes and
the contents, content-addressed, under the data dir:

    <data>/checkpoints/objects/ab/cdef…    the bytes, by SHA-256
    <data>/checkpoints/sessions/<id>.jsonl one line per change, and one per rewind

A change line is `{"turn", "path", "before", "after"}` (hashes; `before` null: the file did not
exist). A rewind line `{"rewind": n}` drops every change from the n-th on. The log is read
afresh each time, so a rewind made by another process or after a restart is seen.

Only the file tools' writes are kept (write_file, edit_file, edit_file_hashed); what shell
commands change is not.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.policy.confined import unlink_beneath, write_beneath
from server.policy.paths import Swapped, open_nofollow
from server.session_ids import check_session_id

ROOT = Path("/")
"""Recorded paths are real paths: rewinding resolves them from the root, through no symlink."""


@dataclass(frozen=True)
class Change:
    turn: str
    path: str
    before: str | None
    after: str | None


@dataclass
class Plan:
    """What rewinding to a turn would do: `restore` path -> content hash (None: delete)."""

    restore: dict[str, str | None]
    conflicts: list[str]
    keep: int
    """How many changes stay in the log."""

    @property
    def restored(self) -> list[str]:
        return [p for p, h in self.restore.items() if h is not None]

    @property
    def removed(self) -> list[str]:
        return [p for p, h in self.restore.items() if h is None]


@dataclass
class Checkpoints:
    root: Path
    session_id: str
    _turn: str = ""
    _turn_files: list[str] = field(default_factory=list)

    @property
    def log_path(self) -> Path:
        return self.root / "sessions" / f"{check_session_id(self.session_id)}.jsonl"

    # -- recording ---------------------------------------------------------------------------

    def record(self, turn: str, path: Path, before: bytes | None, after: bytes | None) -> bool:
        """One change a file tool made; True when it is the turn's first change of `path`."""
        change = Change(turn, str(path), self._put(before), self._put(after))
        self._append({"turn": change.turn, "path": change.path, "before": change.before,
                      "after": change.after})  # fmt: skip
        if turn != self._turn:
            self._turn, self._turn_files = turn, []
        if change.path in self._turn_files:
            return False
        self._turn_files.append(change.path)
        return True

    def turn_files(self, turn: str) -> list[str]:
        """The files `turn` changed, first change first (from this process's records)."""
        return list(self._turn_files) if turn == self._turn else []

    # -- reading and rewinding ---------------------------------------------------------------

    def changes(self) -> list[Change]:
        kept: list[Change] = []
        try:
            lines = self.log_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        for line in lines:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash
            if "rewind" in entry:
                del kept[int(entry["rewind"]) :]
            else:
                kept.append(Change(entry["turn"], entry["path"], entry["before"], entry["after"]))
        return kept

    def turns_with_changes(self) -> dict[str, list[str]]:
        """Turn id -> the files it changed (still undoable), in order."""
        out: dict[str, list[str]] = {}
        for change in self.changes():
            files = out.setdefault(change.turn, [])
            if change.path not in files:
                files.append(change.path)
        return out

    def plan(self, turns: list[str]) -> Plan:
        """Undo every change made by `turns` (a turn and all later ones): each file goes back to
        what it held before its first such change; a file whose content is no longer what
        agentls last wrote is a conflict."""
        changes = self.changes()
        undone = set(turns)
        first = next((i for i, c in enumerate(changes) if c.turn in undone), len(changes))
        restore: dict[str, str | None] = {}
        last: dict[str, str | None] = {}
        for change in changes[first:]:
            restore.setdefault(change.path, change.before)
            last[change.path] = change.after
        conflicts = [p for p, h in last.items() if content_hash(Path(p)) != h]
        return Plan(restore, conflicts, first)

    def apply(self, plan: Plan) -> None:
        """Restore the files of a plan without conflicts, then drop its changes from the log."""
        for path, digest in plan.restore.items():
            target = Path(path)
            if digest is None:
                unlink_beneath(target, ROOT)
            else:
                write_beneath(target, ROOT, self._get(digest), create_folders=True)
        self._append({"rewind": plan.keep})
        self._turn, self._turn_files = "", []

    # -- storage -------------------------------------------------------------------------------

    def _object(self, digest: str) -> Path:
        return self.root / "objects" / digest[:2] / digest[2:]

    def _put(self, data: bytes | None) -> str | None:
        if data is None:
            return None
        digest = hashlib.sha256(data).hexdigest()
        target = self._object(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
                tmp.write(data)
            os.replace(tmp.name, target)
        return digest

    def _get(self, digest: str) -> bytes:
        return self._object(digest).read_bytes()

    def _append(self, entry: dict[str, Any]) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def read_bytes(path: Path) -> bytes | None:
    """A file's bytes, not through a symlink; None when there is no file (or it cannot be read)."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except (OSError, Swapped):
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def content_hash(path: Path) -> str | None:
    """The SHA-256 of a file's bytes; None when there is no file (or it cannot be read)."""
    data = read_bytes(path)
    return None if data is None else hashlib.sha256(data).hexdigest()


def copy_log(source: Checkpoints, target: Checkpoints, turns: dict[str, str]) -> None:
    """Start `target`'s log with `source`'s changes of `turns` (old id -> new id): a branch
    session can undo what the turns it inherited changed."""
    for change in source.changes():
        if change.turn in turns:
            target._append({"turn": turns[change.turn], "path": change.path,
                            "before": change.before, "after": change.after})  # fmt: skip


@dataclass
class Collected:
    """What `collect_garbage` removed."""

    logs: int = 0
    objects: int = 0
    bytes: int = 0


def collect_garbage(root: Path, *, older_than_s: float | None) -> Collected:
    """Remove the change logs untouched for `older_than_s` seconds (None: none), then every
    content no remaining log can restore (a rewound change's, a removed log's)."""
    import time

    done = Collected()
    referenced: set[str] = set()
    for log in sorted((root / "sessions").glob("*.jsonl")):
        if older_than_s is not None and time.time() - log.stat().st_mtime >= older_than_s:
            log.unlink(missing_ok=True)
            done.logs += 1
            continue
        for change in Checkpoints(root, log.stem).changes():
            referenced.update(h for h in (change.before, change.after) if h is not None)
    for obj in (root / "objects").glob("*/*"):
        if obj.parent.name + obj.name in referenced or obj.name.startswith("tmp"):
            continue
        done.bytes += obj.stat().st_size
        obj.unlink(missing_ok=True)
        done.objects += 1
    return done

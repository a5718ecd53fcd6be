"""The checks on a shell command that ask in every mode, bypass included: recursive deletes
(any spelling), and anything that touches a `.env` file or `.git` once globs are expanded
against the workspace and symlinks resolved."""

from __future__ import annotations

import glob
import re
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from server.policy.paths import env_file, git_dir, workspace_parts
from server.policy.shell import ParsedCommand, SimpleCommand, parse

RM_RF = "the command deletes files recursively without confirmation (rm -rf)"
RM_R = "the command deletes files recursively (rm -r)"
FIND_DELETE = "the command deletes the files find matches (find -delete)"
TREE = "the command deletes a directory tree"
ENV = "the command touches a .env file, which may contain secrets"
GIT = "the command touches .git, where hooks and config run as code"

_RM_CALL = re.compile(r"(?<![\w-])rm\s([^;&|\n]*)")
_WIN_RECURSIVE_DELETE = re.compile(r"(?i)\b(?:rd|rmdir)\s+/s\b|remove-item\b.*-recurse")
_ENV_TEXT = re.compile(r"(?i)(?<![\w.$-])\.env")
_GLOB = re.compile(r"[*?\[]")
GLOB_LIMIT = 2000


def command_guard(command: str, cwd: Path) -> str | None:
    parsed = parse(command)
    if parsed is None:
        return _text_guard(command)
    for simple in parsed.commands:
        reason = _delete_reason(simple)
        if reason:
            return reason
    if _WIN_RECURSIVE_DELETE.search(command):
        return TREE
    if _ENV_TEXT.search(command):
        return ENV
    return _touch_reason(parsed, cwd)


def _text_guard(command: str) -> str | None:
    for match in _RM_CALL.finditer(command):
        flags = _flags(match.group(1).split())
        if flags & {"r", "R", "--recursive"}:
            return RM_RF if flags & {"f", "--force"} else RM_R
    if _WIN_RECURSIVE_DELETE.search(command):
        return TREE
    return ENV if _ENV_TEXT.search(command) else None


def _flags(words: list[str] | tuple[str, ...]) -> set[str]:
    flags: set[str] = set()
    for word in words:
        if word == "--":
            break
        if word.startswith("--"):
            flags.add(word)
        elif word.startswith("-"):
            flags.update(word[1:])
    return flags


def _delete_reason(simple: SimpleCommand) -> str | None:
    words = list(simple.words)
    # `sudo rm`, `xargs rm`, `command rm`: look at every rm in the words.
    for i, word in enumerate(words):
        if Path(word).name == "rm":
            flags = _flags(words[i + 1 :])
            if flags & {"r", "R", "--recursive"}:
                return RM_RF if flags & {"f", "--force"} else RM_R
    if simple.program == "find" and ("-delete" in words or _find_exec_rm(words)):
        return FIND_DELETE
    return None


def _find_exec_rm(words: list[str]) -> bool:
    return any(
        w in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(words)
        and Path(words[i + 1]).name in ("rm", "rmdir", "unlink", "shred")
        for i, w in enumerate(words)
    )


def _touch_reason(parsed: ParsedCommand, cwd: Path) -> str | None:
    for path in touched(parsed, cwd):
        parts = workspace_parts(path, cwd)
        lexical = path.parts
        if env_file(lexical) or (parts is not None and env_file(parts)):
            return ENV
        if git_dir(lexical[len(cwd.parts):]) or (parts is not None and git_dir(parts)):
            return GIT
    return None


def touched(parsed: ParsedCommand, cwd: Path) -> Iterator[Path]:
    """Every path the command's words may name, globs expanded as bash would."""
    words = [w for simple in parsed.commands for w in simple.words[1:]] + parsed.redirects
    for word in words:
        for candidate in _candidates(word):
            for match in _expand(candidate, cwd):
                yield match if match.is_absolute() else cwd / match


def _candidates(word: str) -> list[str]:
    if word.startswith("-"):
        return [word.split("=", 1)[1]] if "=" in word else []
    out = [word]
    if "=" in word:
        out.append(word.split("=", 1)[1])
    return [w for w in out if w]


def _expand(word: str, cwd: Path) -> list[Path]:
    if word.startswith("~"):
        word = str(Path(word).expanduser())
    if not _GLOB.search(word):
        return [Path(word)]
    try:
        found = list(islice(glob.iglob(word, root_dir=cwd, recursive=True), GLOB_LIMIT))
    except (OSError, ValueError):
        found = []
    return [Path(f) for f in found] or [Path(word)]

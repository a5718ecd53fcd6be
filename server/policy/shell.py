"""What a shell command runs, as bash parses it (`bashlex`).

A command line becomes its simple commands (every one, including those inside command and
process substitutions, loops and pipelines), the targets of its redirections and the
constructs no allow rule may cover: substitutions, `eval`, `sh -c`, function definitions.
A line bashlex cannot parse is `None`: the policy then asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePath
from typing import Any

from server import background

SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"}
RUNS_TEXT = {"eval", "source", ".", "exec"}
SUBCOMMAND = re.compile(r"[A-Za-z][\w:+-]*")
# Programs whose second word picks what they do: "always allow" remembers both words for them.
SUBCOMMAND_PROGRAMS = {
    "apt", "apt-get", "brew", "bun", "bundle", "cargo", "cmake", "composer", "conda", "deno",
    "docker", "dotnet", "gh", "git", "go", "gradle", "helm", "hg", "kubectl", "make", "mvn",
    "npm", "npx", "pip", "pip3", "pipx", "pnpm", "podman", "poetry", "rustup", "svn",
    "systemctl", "terraform", "uv", "yarn",
}


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[str, ...]
    """After quote removal, as the program receives them (globs unexpanded)."""
    text: str
    """The command as written, for the user."""
    plain: bool = True
    """No variable assignment before it and no expansion in its program name."""

    @property
    def program(self) -> str:
        return PurePath(self.words[0]).name if self.words else ""


@dataclass
class ParsedCommand:
    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[str] = field(default_factory=list)
    """Targets of redirections that open a file (`>`, `>>`, `<`, `&>`, ...)."""
    constructs: list[str] = field(default_factory=list)
    """Why no allow rule can cover the line (a substitution, `eval`, `sh -c`, a function)."""


def warm() -> None:
    """Import bashlex on the background import thread (`server.background`), once: it builds
    and checks its grammar's tables when imported (~0.1 s of CPU), which would otherwise hold
    up the first command's decision. Called while the user types a session's first prompt.
    The tables are built, never read from a file: a file anything could rewrite would decide
    which commands an allow rule covers."""
    background.start("bashlex")


@lru_cache(maxsize=512)
def parse(command: str) -> ParsedCommand | None:
    """The command line's parts; None when bashlex cannot parse it. Cached: one call is
    judged by several policies, and agents run the same commands again and again (bashlex
    takes about a millisecond per line); the result is shared, so it is never changed."""
    background.ready("bashlex")
    import bashlex
    import bashlex.errors

    try:
        trees = bashlex.parse(command)
    except (bashlex.errors.ParsingError, NotImplementedError, RecursionError, LookupError,
            TypeError, ValueError, AttributeError):
        return None
    out = ParsedCommand()
    for tree in trees:
        _walk(tree, command, out)
    for simple in out.commands:
        reason = runs_text(simple)
        if reason:
            out.constructs.append(reason)
    return out


def _walk(node: Any, source: str, out: ParsedCommand) -> None:
    kind = getattr(node, "kind", "")
    if kind == "command":
        _command(node, source, out)
        return
    if kind in ("commandsubstitution", "processsubstitution"):
        out.constructs.append(f"a {kind.replace('substitution', ' substitution')}")
    elif kind == "function":
        out.constructs.append("a function definition")
    elif kind == "redirect":
        _redirect(node, out)
    for child in _children(node):
        _walk(child, source, out)


def _children(node: Any) -> list[Any]:
    found: list[Any] = []
    for attr in ("parts", "list", "command", "output", "body"):
        value = getattr(node, attr, None)
        if isinstance(value, list):
            found.extend(value)
        elif value is not None and hasattr(value, "kind"):
            found.append(value)
    return found


def _command(node: Any, source: str, out: ParsedCommand) -> None:
    words: list[str] = []
    plain = True
    for part in node.parts:
        if part.kind == "assignment" and not words:
            plain = False  # `VAR=x cmd` changes what cmd does
        elif part.kind == "word":
            if not words and getattr(part, "parts", None):
                plain = False  # the program's name is computed ($CMD, $(...))
            words.append(part.word)
        _walk(part, source, out)
    start, end = node.pos
    out.commands.append(SimpleCommand(tuple(words), source[start:end], plain))


def _redirect(node: Any, out: ParsedCommand) -> None:
    target: Any = getattr(node, "output", None)
    if getattr(target, "kind", "") == "word" and not str(node.type).startswith("<<"):
        out.redirects.append(target.word)


def runs_text(simple: SimpleCommand) -> str | None:
    """Commands that run a string as code: no rule about the outer program can vouch for it."""
    program = simple.program
    if program in RUNS_TEXT:
        return f"`{program}` runs its arguments as a command"
    if program in SHELLS and any(_has_c_flag(w) for w in simple.words[1:]):
        return f"`{program} -c` runs its argument as a command"
    return None


def _has_c_flag(word: str) -> bool:
    return word.startswith("-") and not word.startswith("--") and "c" in word[1:]


def prefix(simple: SimpleCommand) -> str:
    """What an "always allow" answer remembers: the program and its subcommand (`git status`,
    `npm test`), or the program alone (`echo`, `ls`, a subcommand tool followed by an option)."""
    words = simple.words
    if len(words) > 1 and simple.program in SUBCOMMAND_PROGRAMS and SUBCOMMAND.fullmatch(words[1]):
        return f"{words[0]} {words[1]}"
    return words[0] if words else ""


def covered(rule: str, simple: SimpleCommand) -> bool:
    """Whether a prefix rule (`git status`, `npm`) covers one simple command."""
    wanted = rule.split()
    return simple.plain and bool(wanted) and list(simple.words[: len(wanted)]) == wanted

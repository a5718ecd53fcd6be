"""Whether a command visibly needs more than its sandbox gives: the network, a write where the
sandbox forbids one, or a secret the sandbox hides (`~/.ssh`, ...). Such a command asks and,
when allowed, runs outside the sandbox; any
other sandboxed command may run unasked (`sandbox.autoAllow`). What cannot be seen in the text
(a program that writes outside by itself) fails inside the sandbox, and the model is told how to
ask for the way out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from server.policy import paths as real_paths
from server.policy.shell import SimpleCommand, parse
from server.tools.sandbox import SandboxSettings

NETWORK_PROGRAMS = {
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp",
    "http", "https", "ping", "dig", "nslookup", "host", "gh", "aria2c", "lftp",
}
NETWORK_SUBCOMMANDS: dict[str, set[str]] = {
    "git": {"clone", "fetch", "pull", "push", "ls-remote", "submodule"},
    "pip": {"install", "download"},
    "pip3": {"install", "download"},
    "pipx": {"install", "run"},
    "uv": {"add", "sync", "lock", "pip", "tool"},
    "poetry": {"add", "install", "update", "lock"},
    "npm": {"install", "i", "ci", "add", "update", "publish", "view", "exec"},
    "npx": set(),
    "pnpm": {"install", "i", "add", "update", "dlx"},
    "yarn": {"install", "add", "upgrade", "dlx"},
    "bun": {"install", "add", "x"},
    "cargo": {"install", "fetch", "update", "search", "publish"},
    "go": {"get", "install", "mod"},
    "gem": {"install", "update"},
    "apt": {"install", "update", "upgrade"},
    "apt-get": {"install", "update", "upgrade"},
    "brew": {"install", "update", "upgrade"},
    "docker": {"pull", "push", "login"},
}
WRAPPERS = {"sudo", "env", "time", "nohup", "nice", "timeout", "command", "exec"}


def leaving(
    command: str,
    *,
    cwd: Path,
    workspace: Path,
    settings: SandboxSettings,
    secrets: Sequence[Path] = (),
    home: Path | None = None,
) -> str | None:
    """Why `command` must leave the sandbox, or None when nothing in its text says so.
    `secrets`: the paths the sandbox hides; `home` expands `~` and `$HOME` in the words."""
    parsed = parse(command)
    if parsed is None:
        return None
    words = [w for c in parsed.commands for w in c.words] + parsed.redirects
    secret = named_secret(words, cwd=cwd, secrets=secrets, home=home or Path.home())
    if secret:
        return f"it names {secret}, which the sandbox hides (it holds secrets)"
    for target in parsed.redirects:
        if target == "/dev/null":
            continue
        path = cwd / Path(target).expanduser()
        inside = real_paths.workspace_parts(path, workspace)
        if settings.mode == "read-only" or inside is None:
            return f"it writes {target}, which the sandbox keeps read-only"
        if real_paths.control_file(inside):
            return f"it writes {target}, a file the sandbox keeps read-only"
    if not (settings.network or settings.allowed_hosts or settings.network_ask):
        # With hosts or "ask", the proxy judges each connection.
        for simple in parsed.commands:
            if needs_network(simple):
                return f"`{simple.text}` needs the network, which the sandbox blocks"
    return None


def needs_network(command: SimpleCommand) -> bool:
    words = list(command.words)
    while words and (Path(words[0]).name in WRAPPERS or "=" in words[0]):
        words.pop(0)
        while words and words[0].startswith("-"):
            words.pop(0)
    if not words:
        return False
    program = Path(words[0]).name
    if program in NETWORK_PROGRAMS:
        return True
    subcommands = NETWORK_SUBCOMMANDS.get(program)
    if subcommands is None:
        return False
    if not subcommands:
        return True
    rest = [w for w in words[1:] if not w.startswith("-")]
    return bool(rest) and rest[0] in subcommands


_HOME_WORD = re.compile(r"^(~|\$HOME|\$\{HOME\})(?=/|$)")


def named_secret(
    words: Sequence[str], *, cwd: Path, secrets: Sequence[Path], home: Path
) -> str | None:
    """The first word (or the path after `=` or `@` in it: `--data=@~/.netrc`) that leads into
    one of `secrets`, as written; None when none does."""
    if not secrets:
        return None
    hidden = {Path(os.path.realpath(s)) for s in secrets}
    hidden |= {Path(os.path.normpath(s)) for s in secrets}
    for word in words:
        for candidate in {word, *re.split(r"[=@]", word)[1:]}:
            if not candidate:
                continue
            text = _HOME_WORD.sub(str(home).replace("\\", "/"), candidate)
            path = Path(os.path.normpath(cwd / text))
            for seen in (path, Path(os.path.realpath(path))):
                if seen in hidden or not hidden.isdisjoint(seen.parents):
                    return candidate
    return None

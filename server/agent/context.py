"""What the model is told: the system prompt, and a per-call turn context message.

The turn context (cwd, git state, session id) is appended as an ephemeral user message for one
call only, so the cached prefix of the conversation stays stable.
"""

from __future__ import annotations

import platform
import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from server.providers.messages import Message, TextPart

CONTEXT_TAG = "turn-context"

SYSTEM_PROMPT = """\
You are agentls, a coding agent working inside the user's editor on the workspace at {cwd}.
You help with software engineering tasks: reading and changing code, running commands, explaining.

How you work:
- Use the tools to look before you act: read the files you change, search instead of guessing.
- Make focused changes that fit the surrounding code's style. Do not reformat unrelated code.
- After changing code, run the relevant tests or checks when the project has them.
- Tool results that are errors tell you what went wrong; fix the call rather than repeating it.
- When a tool call is denied, do not retry it in another form; ask or choose another approach.
- Paths are relative to the workspace unless absolute. Stay inside the workspace.
- Be concise. Answer in the user's language. Show code only when it helps.

Environment: {os}, today is {today}.
"""


@dataclass(frozen=True)
class GitState:
    branch: str
    sha: str
    dirty: int


def git_state(cwd: Path) -> GitState | None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()

    try:
        branch = git("rev-parse", "--abbrev-ref", "HEAD")
        sha = git("rev-parse", "--short", "HEAD")
        dirty = len([line for line in git("status", "--porcelain").splitlines() if line])
    except (OSError, subprocess.SubprocessError):
        return None
    return GitState(branch, sha, dirty)


def system_prompt(cwd: Path, *, replace: str | None = None, append: str | None = None) -> str:
    """Our prompt, or `replace` when given (an empty string keeps ours), plus `append`."""
    base = replace or SYSTEM_PROMPT.format(
        cwd=cwd, os=platform.system(), today=date.today().isoformat()
    )
    return f"{base}\n{append}" if append else base


def turn_context(cwd: Path, session_id: str, git: GitState | None) -> Message:
    lines = [f"<{CONTEXT_TAG}>", f"cwd: {cwd}", f"session: {session_id}"]
    if git:
        lines.append(f"git: branch {git.branch} at {git.sha}, {git.dirty} changed file(s)")
    lines.append(f"</{CONTEXT_TAG}>")
    return Message("user", [TextPart("\n".join(lines))])


def is_turn_context(message: Message) -> bool:
    return message.role == "user" and message.text.startswith(f"<{CONTEXT_TAG}>")

"""What the model is told: the system prompt, and a per-call turn context message.

The system prompt lists the session's tools, skills and subagents. Before every model call
`prepare_call` builds the turn context (cwd, git state, session id, active skills), which is
appended as an ephemeral user message for that call only: never stored in the history, so the
cached prefix of the conversation stays stable. `git status` runs, and the instruction files are
looked for, at the first call of a turn and again only after a step whose tools may have changed
the workspace (`observing_only`).
"""

from __future__ import annotations

import platform
import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import anyio

from server.agent.instructions import repository_root
from server.agent.state import AgentSession
from server.providers import images
from server.providers.messages import CONTEXT_TAG, Message, ModelRequest, TextPart
from server.skills import ACTIVE_KEY, summary_lines
from server.tools.git_env import run_bounded, safe_env
from server.turn import TurnSink

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
    dirty: int | None
    """Changed or untracked files; None when `git status` did not answer."""

    def describe(self) -> str:
        if not self.branch:
            return "status unknown"
        if self.dirty is None:
            state = "status unknown"
        else:
            state = f"{self.dirty} uncommitted" if self.dirty else "clean"
        return f"{self.branch}@{self.sha} ({state})"


UNKNOWN = GitState("", "", None)
GIT_TIMEOUT_S = 5


def git_state(cwd: Path) -> GitState | None:
    """The repository state of `cwd`; None when it is not inside a git work tree. Runs no
    program the repository's config names (see `server.tools.git_env`)."""
    if cwd.is_dir() and repository_root(cwd) is None:
        return None  # no `.git` above: git would say so too, after ~5 ms of starting up
    env = safe_env(cwd)

    def git(*args: str) -> str:
        argv = ["git", "--no-pager", *args]
        done = run_bounded(argv, cwd=cwd, env=env, timeout_s=GIT_TIMEOUT_S)
        if done.returncode:
            raise subprocess.CalledProcessError(
                done.returncode, argv, done.stdout, done.stderr.decode("utf-8", "replace")
            )
        return done.stdout.decode("utf-8", "replace")

    try:
        out = git("status", "--porcelain=v2", "--branch")
    except subprocess.TimeoutExpired:
        return _head_only(git)
    except subprocess.CalledProcessError as exc:
        return None if "not a git repository" in (exc.stderr or "").lower() else UNKNOWN
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    heads = dict(line[2:].split(" ", 1) for line in out.splitlines() if line.startswith("# "))
    sha = heads.get("branch.oid", "")
    branch = heads.get("branch.head", "HEAD")
    dirty = sum(1 for line in out.splitlines() if line and not line.startswith("#"))
    return GitState(branch, "(no commits)" if sha in ("", "(initial)") else sha[:7], dirty)


def _head_only(git) -> GitState:
    try:
        branch = git("rev-parse", "--abbrev-ref", "HEAD").strip()
        return GitState(branch, git("rev-parse", "--short", "HEAD").strip(), None)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN


def system_prompt(cwd: Path, *, replace: str | None = None, append: str | None = None) -> str:
    """Our prompt, or `replace` when given (an empty string keeps ours), plus `append`."""
    base = replace or SYSTEM_PROMPT.format(
        cwd=cwd, os=platform.system(), today=date.today().isoformat()
    )
    return f"{base}\n{append}" if append else base


def session_system_prompt(session: AgentSession, files: str = "") -> str:
    """Our prompt with what this session can use (tools, skills, subagents, its role) and the
    instruction files, then the configured append. A configured replacement is used exactly as written, except by subagents:
    it was written for the agent the user talks to."""
    config, delegation = session.spec.config, session.delegation
    append = config.get("appendSystemPrompt")
    if config.get("systemPrompt") and not (delegation and delegation.depth):
        return system_prompt(session.spec.cwd, replace=config["systemPrompt"], append=append)
    parts = [system_prompt(session.spec.cwd).rstrip(), "## Tools\n" + ", ".join(session.tools)]
    skills = session.skills.for_model() if session.skills and "skill" in session.tools else []
    if skills:
        parts.append("\n".join(summary_lines(skills)))
    if delegation and "task" in session.tools:
        parts.append("\n".join(delegation.registry.summary_lines()))
    if delegation and delegation.profile:
        parts.append(delegation.profile.role_prompt(subagent=delegation.depth > 0))
    if files:
        parts.append(files)
    return "\n\n".join(parts) + "\n" + (f"\n{append}" if append else "")


def configured_instructions(session: AgentSession, files: str = "") -> str:
    """What the user and the project tell the model to follow, for providers that write their
    own system prompt: a configured replacement prompt (not for subagents) or the instruction
    files (`files`, rendered), then the configured append."""
    config, delegation = session.spec.config, session.delegation
    replaced = config.get("systemPrompt") and not (delegation and delegation.depth)
    parts = [config.get("systemPrompt") if replaced else files, config.get("appendSystemPrompt")]
    return "\n\n".join(p for p in parts if p)


def build_request(session: AgentSession, context: Message) -> ModelRequest:
    """The next model call: the (compacted) history, then the per-call turn context."""
    messages = session.view.messages(session.history)
    if images.can_see(session.model, session.settings.provider, session.vision_model):
        images.mark_seen(session.history, session.model)
    else:
        messages = images.without_images(messages)
    files = session.seen.get("instructions")
    if files is None:
        files = session.seen["instructions"] = (
            session.instructions.render() if session.instructions else ""
        )
    return ModelRequest(
        model=session.model,
        system=session_system_prompt(session, files),
        messages=[*messages, context],
        tools=session.tool_specs(),
        options=session.call_options(),
        stable_prefix=len(messages),
        instructions=configured_instructions(session, files),
    )


async def prepare_call(session: AgentSession, sink: TurnSink) -> Message:
    """Run before every model call: settle the model (vision routing, a pending switch) and
    build the call's ephemeral turn context."""
    session.apply_skill_model()
    session.route_vision(sink)
    session.announce_switch(sink)
    if "git" not in session.seen:
        session.seen["git"] = await anyio.to_thread.run_sync(git_state, session.spec.cwd)
    git = session.seen["git"]
    active = session.tool_ctx.state.get(ACTIVE_KEY) or []
    plan = session.permissions.mode == "plan"
    return turn_context(session.spec.cwd, session.spec.session_id, git, active=active, plan=plan)


PLAN_MODE_NOTE = (
    "mode: plan (read-only: explore and plan, change nothing). When the plan is ready, write it "
    "with todo_write: the user is asked to approve it, and once approved you may carry it out."
)


def turn_context(
    cwd: Path,
    session_id: str,
    git: GitState | None,
    *,
    active: list[str] | None = None,
    plan: bool = False,
) -> Message:
    lines = [f"<{CONTEXT_TAG}>", f"cwd: {cwd}", f"session: {session_id}"]
    lines.append(f"git: {git.describe()}" if git else "git: not a repository")
    if active:
        lines.append(f"active skills: {', '.join(active)}")
    if plan:
        lines.append(PLAN_MODE_NOTE)
    lines.append(f"</{CONTEXT_TAG}>")
    return Message("user", [TextPart("\n".join(lines))])

"""agentls's skills as a Claude Code plugin (`--plugin-dir`), for the `claude-code` engine.

Claude Code finds `~/.claude/skills` and the workspace's `.claude/skills` by itself; the plugin
carries the others: the built-in skills, `~/.agentls/skills`, and the workspace's
`.agents/skills` and `.agentls/skills` when the workspace is trusted (a skill's `allowed-tools`
lets Claude Code run tools unasked, which a cloned repository must not decide). Claude Code
lists them as `agentls:<name>`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from server import __version__
from server.skills import Skill

PLUGIN_NAME = "agentls"


def seen_by_claude_code(skill: Skill, cwd: Path, home: Path) -> bool:
    return any(
        skill.file.resolve().is_relative_to(root.resolve())
        for root in (home / ".claude" / "skills", cwd / ".claude" / "skills")
    )


def plugin_skills(skills: list[Skill], cwd: Path, home: Path, *, trusted: bool) -> list[Skill]:
    """The skills the plugin carries."""
    return [
        s
        for s in skills
        if not seen_by_claude_code(s, cwd, home) and (trusted or s.source != "project")
    ]


def build_plugin(skills: list[Skill]) -> Path | None:
    """A plugin folder whose `skills/` links to each skill's folder; None when there are none.
    The caller removes it (`remove_plugin`)."""
    if not skills:
        return None
    root = Path(tempfile.mkdtemp(prefix="agentls-plugin-"))
    manifest = {
        "name": PLUGIN_NAME,
        "version": __version__,
        "description": "agentls's skills, for sessions of the claude-code engine",
    }
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest, indent=2))
    (root / "skills").mkdir()
    for skill in skills:
        (root / "skills" / skill.name).symlink_to(skill.directory, target_is_directory=True)
    return root


def remove_plugin(root: Path | None) -> None:
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)

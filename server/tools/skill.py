"""skill: the model runs a skill and gets its instructions with the arguments filled in."""

from __future__ import annotations

import anyio
from pydantic import Field

from server.skills import SkillCatalog, activate

from .base import Tool, ToolContext, ToolError, ToolInput


class SkillInput(ToolInput):
    skill: str = Field(description="The skill's name as listed under Skills (any letter case).")
    args: str | None = Field(
        None,
        description="Arguments, as a user would type them after /name: the whole string fills "
        "$ARGUMENTS, its whitespace-separated words fill $1, $2, ...",
    )


class SkillTool(Tool):
    """Looks skills up in the session's catalog and marks the one it runs active for the turn
    (its `allowed-tools` then run without asking, its `providerOptions` apply to later calls)."""

    name = "skill"
    description = (
        "Run a skill: a packaged procedure for a kind of task (listed under Skills in the system "
        "prompt). The result is the skill's instructions, with your arguments filled in and the "
        "skill's directory (for its helper scripts) on the first line; then follow them. Run a "
        "skill when the user's request matches its description, before starting the work."
    )
    Input = SkillInput
    read_only = True
    kind = "think"

    def __init__(self, catalog: SkillCatalog):
        self.catalog = catalog

    def title(self, args: SkillInput) -> str:
        return f"Skill {args.skill}" + (f" {args.args}" if args.args else "")

    async def run(self, ctx: ToolContext, args: SkillInput) -> str:
        skill = self.catalog.get(args.skill)
        if skill is None:
            names = ", ".join(s.name for s in self.catalog.for_model()) or "none"
            raise ToolError(f"Unknown skill {args.skill!r}. Available skills: {names}.")
        if not skill.model_invocable:
            raise ToolError(
                f"The skill {skill.name!r} can only be run by the user (as /{skill.name}); "
                "do not run it yourself."
            )
        try:
            text = await anyio.to_thread.run_sync(skill.render, args.args or "")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ToolError(f"The skill {skill.name!r} cannot be read: {exc}") from None
        activate(skill, ctx.state)
        return text

"""Skills: folders holding a `SKILL.md` that the model (the `skill` tool) or the user (`/name args`
in a prompt) can run.

Discovery layers, later wins on a name clash (names compare case-insensitively): the built-in
`skills/` < `~/.agentls/skills` < `~/.claude/skills` < `<project>/.claude/skills` <
`<project>/.agents/skills` < `<project>/.agentls/skills`. `AGENTLS_SKILLS=0` turns them all off.

Only the frontmatter is read at discovery; the body is read when the skill runs. A skill whose
frontmatter is broken is skipped and reported as a `SkillWarning`, as is what a usable skill's
frontmatter asks that agentls does not use; discovery never raises.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from protocol.methods import CatalogWarning, SkillInfo, SkillsListResult
from server.config import local_model_file
from server.logs import warn_once
from server.providers.options import SKILL_STATE_KEY

log = logging.getLogger(__name__)

Source = Literal["builtin", "user", "project"]

ACTIVE_KEY = "activeSkills"
MODEL_KEY = "skillModel"
"""(skill name, model) of the last activated skill that names a model."""
"""Tool-context state key: names of the skills run in the current turn, in order."""

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "skills"
"""The repository's `skills/`; a wheel installs it beside the `server` package."""
SKILL_FILES = ("SKILL.md", "skill.md")
MAX_HEAD_LINES = 500
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(.*?)^---[ \t]*$\n?", re.DOTALL | re.MULTILINE)
_NAME = re.compile(r"[^\s/$]+")
_TOKEN = re.compile(r"\$\$|\$ARGUMENTS(?!\w)|\$(\d+)")
_COMMAND = re.compile(r"\s*/([^\s/]+)(?:\s+(.*))?", re.DOTALL)


class FrontmatterError(ValueError):
    """The file's frontmatter is missing, is not YAML, or lacks a required field."""


@dataclass(frozen=True)
class SkillWarning:
    """A skill (or subagent profile) file that was skipped, and why; or what a skill's
    frontmatter asks that is not used."""

    path: str
    message: str


@dataclass(frozen=True)
class Skill:
    """One discovered skill; `body()` and `render()` read the file when called."""

    name: str
    description: str
    file: Path
    source: Source = "builtin"
    version: str | None = None
    model_invocable: bool = True
    """False when the frontmatter says `disable-model-invocation: true`."""
    user_invocable: bool = True
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    provider_options: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()
    """What the frontmatter says that agentls does not use (reported, the skill still runs)."""

    @property
    def directory(self) -> Path:
        return self.file.parent.resolve()

    def body(self) -> str:
        _, body = split_frontmatter(self.file.read_text(encoding="utf-8-sig"))
        return body.lstrip("\n")

    def render(self, args: str = "") -> str:
        """Substitute the arguments into the body, then prepend the skill directory line."""
        return f"Skill directory: {self.directory}\n\n{substitute(self.body(), args)}"


# -- substitution -------------------------------------------------------------------------------


def substitute(body: str, args: str = "") -> str:
    """`$$` -> `$`; `$ARGUMENTS` (not followed by a word character) -> `args` verbatim;
    `$N` -> the N-th word of `args`, split as a shell would (`"b c"` is one word; unbalanced
    quotes fall back to whitespace). `$0`, `$0N` and indexes past the last word stay as written.
    One left-to-right pass, so inserted text is never expanded again."""
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()

    def one(match: re.Match[str]) -> str:
        token, digits = match.group(0), match.group(1)
        if token == "$$":
            return "$"
        if digits is None:
            return args
        if digits.startswith("0") or int(digits) > len(words):
            return token
        return words[int(digits) - 1]

    return _TOKEN.sub(one, body)


# -- frontmatter --------------------------------------------------------------------------------


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(the YAML mapping between the leading `---` lines, the rest of the text)."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    match = _FRONTMATTER.match(text)
    if not match:
        raise FrontmatterError("no frontmatter: the file must start with a '---' line and close it")
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"invalid YAML in the frontmatter: {_yaml_problem(exc)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter must be a YAML mapping of keys to values")
    return data, text[match.end() :]


def read_head(path: Path) -> dict[str, Any]:
    """The frontmatter of `path`, reading no further than its closing `---`."""
    lines: list[str] = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for number, line in enumerate(fh):
            lines.append(line)
            closing = line.rstrip() == "---"
            if (number == 0 and not closing) or (number > 0 and closing):
                break
            if number >= MAX_HEAD_LINES:
                raise FrontmatterError(
                    f"the frontmatter is not closed within {MAX_HEAD_LINES} lines"
                )
    return split_frontmatter("".join(lines))[0]


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem} (frontmatter line {mark.line + 1})" if mark else problem


def required_text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if (
        not isinstance(value, str | int | float)
        or isinstance(value, bool)
        or not str(value).strip()
    ):
        raise FrontmatterError(f"missing required field {key!r} (a non-empty string)")
    return str(value).strip()


def optional_text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, dict | list):
        raise FrontmatterError(f"{key!r} must be a string")
    return str(value).strip() or None


def flag(data: dict[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise FrontmatterError(f"{key!r} must be true or false")
    return value


def name_list(data: dict[str, Any], key: str) -> tuple[str, ...] | None:
    """A comma list (`Read, Bash(git diff:*)`) or a YAML list of names; None when absent."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(p.strip() for p in _split_commas(value) if p.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise FrontmatterError(f"{key!r} must be a comma-separated string or a list of names")


def _split_commas(text: str) -> list[str]:
    """Split on commas outside parentheses: `Bash(git log --format=%h,%s)` stays whole."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_skill(file: Path, source: Source) -> Skill:
    data = read_head(file)
    name = required_text(data, "name")
    if not _NAME.fullmatch(name):
        raise FrontmatterError(f"name {name!r} must be one word (no spaces, '/' or '$')")
    options, notes = _options(data)
    return Skill(
        name=name,
        description=required_text(data, "description"),
        file=file,
        source=source,
        version=optional_text(data, "version"),
        model_invocable=not flag(data, "disable-model-invocation", False),
        user_invocable=flag(data, "user-invocable", True),
        allowed_tools=name_list(data, "allowed-tools") or (),
        model=optional_text(data, "model"),
        provider_options=options,
        notes=notes,
    )


def _options(data: dict[str, Any]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """`providerOptions` over the seed format's `modelHints.providerOptions`, and the other
    model hints, which nothing here reads."""
    hints = _mapping(data, "modelHints") or {}
    hinted = _mapping(hints, "providerOptions", "modelHints.providerOptions")
    options = overlay(hinted or {}, _mapping(data, "providerOptions") or {})
    notes = tuple(
        f"modelHints.{key} is not used (agentls reads modelHints.providerOptions only)"
        for key in hints
        if key != "providerOptions"
    )
    return options or None, notes


def _mapping(data: dict[str, Any], key: str, shown: str | None = None) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise FrontmatterError(f"'{shown or key}' must be a mapping")
    return value


# -- discovery ----------------------------------------------------------------------------------


def layers(cwd: Path, home: Path, builtin: Path) -> list[tuple[Source, Path]]:
    return [
        ("builtin", builtin),
        ("user", home / ".agentls" / "skills"),
        ("user", home / ".claude" / "skills"),
        ("project", cwd / ".claude" / "skills"),
        ("project", cwd / ".agents" / "skills"),
        ("project", cwd / ".agentls" / "skills"),
    ]


def skill_file(folder: Path) -> Path | None:
    return next((folder / n for n in SKILL_FILES if (folder / n).is_file()), None)


def discover(
    cwd: Path, *, home: Path, builtin: Path | None = None, environ: Mapping[str, str] | None = None
) -> tuple[list[Skill], list[SkillWarning]]:
    """Every usable skill (sorted by name) and the files skipped on the way."""
    if (environ or {}).get("AGENTLS_SKILLS", "").strip() == "0":
        return [], []
    found: dict[str, Skill] = {}
    warnings: list[SkillWarning] = []
    for source, root in layers(cwd, home, builtin or BUILTIN_DIR):
        for folder in _folders(root):
            file = skill_file(folder)
            if file is None:
                continue
            try:
                skill = parse_skill_cached(file, source)
            except (FrontmatterError, OSError, UnicodeDecodeError) as exc:
                log.warning("skill %s skipped: %s", file, exc)
                warnings.append(SkillWarning(str(file), str(exc)))
                continue
            for note in skill.notes:
                warn_once(log, (file, note), "skill %s: %s", file, note)
                warnings.append(SkillWarning(str(file), note))
            found[skill.name.lower()] = skill
    return sorted(found.values(), key=lambda s: s.name.lower()), warnings


_PARSED: dict[tuple[Path, str], tuple[tuple[int, int], Skill]] = {}


def parse_skill_cached(file: Path, source: Source) -> Skill:
    """`parse_skill`, re-reading the file only when its size or mtime changed: discovery runs
    at every turn and YAML parsing dominates it."""
    stat = file.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _PARSED.get((file, source))
    if cached and cached[0] == stamp:
        return cached[1]
    skill = parse_skill(file, source)
    _PARSED[(file, source)] = (stamp, skill)
    return skill


def _folders(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []


class SkillCatalog:
    """The skills one workspace sees; `refresh()` re-reads the layers (new or edited skills)."""

    def __init__(
        self,
        cwd: Path,
        *,
        home: Path,
        environ: Mapping[str, str] | None = None,
        builtin: Path | None = None,
    ):
        self.cwd, self.home, self.environ, self.builtin = cwd, home, environ, builtin
        self.skills: list[Skill] = []
        self.warnings: list[SkillWarning] = []
        self.refresh()

    def refresh(self) -> None:
        self.skills, self.warnings = discover(
            self.cwd, home=self.home, builtin=self.builtin, environ=self.environ
        )

    def get(self, name: str) -> Skill | None:
        wanted = name.strip().lstrip("/").lower()
        return next((s for s in self.skills if s.name.lower() == wanted), None)

    def for_model(self) -> list[Skill]:
        return [s for s in self.skills if s.model_invocable]

    def commands(self) -> list[Skill]:
        return [s for s in self.skills if s.user_invocable]


# -- running a skill ----------------------------------------------------------------------------


def parse_command(text: str) -> tuple[str, str] | None:
    """`/name rest...` -> (name, rest stripped); None when the text is not a slash command."""
    match = _COMMAND.fullmatch(text)
    if not match:
        return None
    return match.group(1), (match.group(2) or "").strip()


def expand_command(text: str, catalog: SkillCatalog | None) -> tuple[str, Skill] | None:
    """A prompt that is `/skill args`: the text the model gets instead, and the skill."""
    command = parse_command(text)
    skill = catalog.get(command[0]) if catalog and command else None
    if command is None or skill is None or not skill.user_invocable:
        return None
    return f"{text.strip()}\n\n{skill.render(command[1])}", skill


def activate(skill: Skill, state: dict[str, Any]) -> None:
    """Mark the skill active for this turn and layer its provider options over earlier ones."""
    active = state.setdefault(ACTIVE_KEY, [])
    if skill.name not in active:
        active.append(skill.name)
    if skill.provider_options:
        state[SKILL_STATE_KEY] = overlay(state.get(SKILL_STATE_KEY) or {}, skill.provider_options)
    if skill.model and skill.model.lower() != "inherit":
        if skill.source == "project" and local_model_file(skill.model):
            log.warning("ignoring model %s of project skill %s", skill.model, skill.name)
        else:
            state[MODEL_KEY] = (skill.name, skill.model)


def deactivate_all(state: dict[str, Any]) -> None:
    state.pop(ACTIVE_KEY, None)
    state.pop(SKILL_STATE_KEY, None)
    state.pop(MODEL_KEY, None)


def overlay(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge that keeps explicit None values: they must still delete keys when this layer
    is merged over the config's options."""
    out = dict(base)
    for key, value in over.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = overlay(current, value)
        else:
            out[key] = dict(value) if isinstance(value, Mapping) else value
    return out


def granted_tools(
    catalog: SkillCatalog | None, state: dict[str, Any], *, trusted: bool
) -> list[str]:
    """The `allowed-tools` of the skills active in this turn; a project's skills grant nothing
    until the user trusts the workspace."""
    if catalog is None:
        return []
    names: list[str] = []
    for name in state.get(ACTIVE_KEY) or []:
        skill = catalog.get(name)
        if skill and (trusted or skill.source != "project"):
            names.extend(skill.allowed_tools)
    return names


def ungranted(catalog: SkillCatalog | None) -> list[str]:
    """Project skills whose `allowed-tools` an untrusted workspace ignores."""
    skills = catalog.skills if catalog else []
    return [s.name for s in skills if s.source == "project" and s.allowed_tools]


def summary_lines(skills: list[Skill]) -> list[str]:
    lines = ["## Skills", "Run one with the `skill` tool when the task matches its description."]
    return lines + [f"- **{s.name}**: {short(s.description)}" for s in skills]


def short(text: str, limit: int = 200) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


# -- the catalogue for editors ------------------------------------------------------------------


def list_skills(cwd: Path, catalog: SkillCatalog | None = None) -> SkillsListResult:
    """`skills/list`: a session's catalog (re-read), or a fresh one for the directory `cwd`."""
    if catalog is None:
        catalog = SkillCatalog(cwd, home=user_home(os.environ), environ=os.environ)
    else:
        catalog.refresh()
    return SkillsListResult(
        skills=[
            SkillInfo(
                name=s.name,
                description=s.description,
                source=s.source,
                path=str(s.file),
                user_invocable=s.user_invocable,
                model_invocable=s.model_invocable,
                allowed_tools=list(s.allowed_tools),
                version=s.version,
                model=s.model,
            )
            for s in catalog.skills
        ],
        warnings=wire_warnings(catalog.warnings),
    )


def wire_warnings(warnings: list[SkillWarning]) -> list[CatalogWarning]:
    return [CatalogWarning(path=w.path, message=w.message) for w in warnings]


def user_home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or Path.home())

"""Skills: layered discovery, frontmatter, substitution and rendering, slash commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.providers.options import SKILL_STATE_KEY
from server.skills import (
    ACTIVE_KEY,
    BUILTIN_DIR,
    MODEL_KEY,
    Skill,
    SkillCatalog,
    activate,
    discover,
    expand_command,
    granted_tools,
    list_skills,
    parse_command,
    substitute,
)


def write_skill(root: Path, folder: str, front: str, body: str = "Body.\n", file="SKILL.md"):
    path = root / folder / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")
    return path


def simple(name: str, description: str = "Does a thing.") -> str:
    return f"name: {name}\ndescription: {description}"


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    out = {"builtin": tmp_path / "builtin", "home": tmp_path / "home", "cwd": tmp_path / "ws"}
    for p in out.values():
        p.mkdir()
    return out


def found(dirs, **kw):
    return discover(dirs["cwd"], home=dirs["home"], builtin=dirs["builtin"], **kw)


# -- discovery ----------------------------------------------------------------------------------


def layer_roots(dirs) -> list[Path]:
    home, cwd = dirs["home"], dirs["cwd"]
    return [
        dirs["builtin"],
        home / ".agentls" / "skills",
        home / ".claude" / "skills",
        cwd / ".claude" / "skills",
        cwd / ".agents" / "skills",
        cwd / ".agentls" / "skills",
    ]


@pytest.mark.parametrize("top", range(6))
def test_a_later_layer_wins_a_name_clash(dirs, top):
    roots = layer_roots(dirs)
    for index in range(top + 1):
        write_skill(roots[index], "dup", simple("dup", f"from layer {index}"))
    skills, warnings = found(dirs)
    assert warnings == []
    [skill] = skills
    assert skill.description == f"from layer {top}"
    assert skill.file == roots[top] / "dup" / "SKILL.md"
    assert skill.source == ["builtin", "user", "user", "project", "project", "project"][top]


def test_every_layer_contributes_and_the_result_is_sorted(dirs):
    for index, root in enumerate(layer_roots(dirs)):
        write_skill(root, f"s{index}", simple(f"skill-{5 - index}"))
    skills, _ = found(dirs)
    assert [s.name for s in skills] == [f"skill-{i}" for i in range(6)]


def test_names_clash_case_insensitively(dirs):
    write_skill(dirs["builtin"], "review", simple("review", "builtin"))
    write_skill(dirs["cwd"] / ".agentls" / "skills", "mine", simple("Review", "mine"))
    skills, _ = found(dirs)
    assert [(s.name, s.description) for s in skills] == [("Review", "mine")]
    catalog = SkillCatalog(dirs["cwd"], home=dirs["home"], builtin=dirs["builtin"])
    assert catalog.get("REVIEW").description == "mine"
    assert catalog.get("/review").description == "mine"
    assert catalog.get("nope") is None


def test_lower_case_skill_md_and_folders_without_one(dirs):
    write_skill(dirs["builtin"], "lower", simple("lower"), file="skill.md")
    (dirs["builtin"] / "empty").mkdir()
    (dirs["builtin"] / "notes").mkdir()
    (dirs["builtin"] / "notes" / "README.md").write_text("not a skill")
    (dirs["builtin"] / "SKILL.md").write_text("---\nname: loose\ndescription: x\n---\n")
    skills, warnings = found(dirs)
    assert [s.name for s in skills] == ["lower"]
    assert warnings == []


def test_agentls_skills_0_disables_everything(dirs):
    write_skill(dirs["builtin"], "a", simple("a"))
    assert found(dirs, environ={"AGENTLS_SKILLS": "0"}) == ([], [])
    assert [s.name for s in found(dirs, environ={"AGENTLS_SKILLS": "1"})[0]] == ["a"]


def test_missing_layers_are_fine(tmp_path):
    assert discover(tmp_path / "nope", home=tmp_path / "nohome", builtin=tmp_path / "x") == ([], [])


def test_the_shipped_skills_are_valid_and_described():
    skills, warnings = discover(
        Path("/nonexistent"), home=Path("/nonexistent"), builtin=BUILTIN_DIR
    )
    assert warnings == []
    names = {s.name for s in skills}
    assert {"review", "write-tests", "explain", "commit-message"} <= names
    for skill in skills:
        assert skill.source == "builtin" and len(skill.description) > 40
        assert skill.render("x").startswith(f"Skill directory: {skill.directory}\n\n")
        for script in skill.directory.glob("scripts/*"):
            assert script.name in skill.body(), f"{skill.name} never mentions {script.name}"


# -- frontmatter --------------------------------------------------------------------------------


BROKEN = [
    ("bad-yaml", "---\nname: x\ndescription: a: b: c\n---\nbody", "invalid YAML"),
    ("unclosed", "---\nname: x\ndescription: y\nbody without end", "no frontmatter"),
    ("none", "just a body\n", "no frontmatter"),
    ("list", "---\n- a\n- b\n---\n", "must be a YAML mapping"),
    ("no-name", "---\ndescription: y\n---\n", "'name'"),
    ("no-desc", "---\nname: x\n---\n", "'description'"),
    ("empty-desc", "---\nname: x\ndescription: '  '\n---\n", "'description'"),
    ("spaced", "---\nname: two words\ndescription: y\n---\n", "one word"),
    ("slashed", "---\nname: a/b\ndescription: y\n---\n", "one word"),
    ("bad-flag", "---\nname: x\ndescription: y\nuser-invocable: maybe\n---\n", "true or false"),
    ("bad-opts", "---\nname: x\ndescription: y\nproviderOptions: [1]\n---\n", "mapping"),
    ("bad-tools", "---\nname: x\ndescription: y\nallowed-tools: {a: 1}\n---\n", "allowed-tools"),
    ("tab-yaml", "---\nname: x\n\tdescription: y\n---\n", "invalid YAML"),
]


@pytest.mark.parametrize(("folder", "text", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_skill_is_skipped_with_a_warning(dirs, folder, text, message):
    (dirs["builtin"] / folder).mkdir()
    (dirs["builtin"] / folder / "SKILL.md").write_text(text)
    write_skill(dirs["builtin"], "good", simple("good"))
    skills, warnings = found(dirs)
    assert [s.name for s in skills] == ["good"]
    [warning] = warnings
    assert warning.path == str(dirs["builtin"] / folder / "SKILL.md")
    assert message in warning.message


def test_bad_yaml_warning_names_the_line(dirs):
    write_skill(dirs["builtin"], "bad", "name: x\ndescription: y\nmodel: [unclosed")
    [warning] = found(dirs)[1]
    assert "frontmatter line" in warning.message


def test_unreadable_bytes_are_a_warning_not_a_crash(dirs):
    (dirs["builtin"] / "bin").mkdir()
    (dirs["builtin"] / "bin" / "SKILL.md").write_bytes(b"---\nname: \xff\xfe\x00\n---\n")
    skills, [warning] = found(dirs)
    assert skills == [] and warning.path.endswith("SKILL.md")


def test_a_broken_skill_does_not_shadow_a_lower_layer(dirs):
    write_skill(dirs["builtin"], "review", simple("review", "builtin"))
    write_skill(dirs["cwd"] / ".agentls" / "skills", "review", "name: review\ndescription: [")
    skills, warnings = found(dirs)
    assert [s.description for s in skills] == ["builtin"] and len(warnings) == 1


def test_optional_fields(dirs):
    front = """name: deploy
description: "Deploy: to staging"
version: 1.0
disable-model-invocation: true
user-invocable: false
allowed-tools: Read, Bash(git log --format=%h,%s), Bash(make deploy:*)
model: claude-haiku-4-5
providerOptions:
  temperature: 0
  reasoning: {effort: low}
unknown-key: ignored"""
    write_skill(dirs["builtin"], "deploy", front)
    [skill] = found(dirs)[0]
    assert skill == Skill(
        name="deploy",
        description="Deploy: to staging",
        file=dirs["builtin"] / "deploy" / "SKILL.md",
        source="builtin",
        version="1.0",
        model_invocable=False,
        user_invocable=False,
        allowed_tools=("Read", "Bash(git log --format=%h,%s)", "Bash(make deploy:*)"),
        model="claude-haiku-4-5",
        provider_options={"temperature": 0, "reasoning": {"effort": "low"}},
    )


def test_allowed_tools_as_a_yaml_list_and_string_flags(dirs):
    write_skill(
        dirs["builtin"],
        "s",
        "name: s\ndescription: d\nallowed-tools: [Read, Grep]\ndisable-model-invocation: 'True'",
    )
    [skill] = found(dirs)[0]
    assert skill.allowed_tools == ("Read", "Grep") and not skill.model_invocable


def test_crlf_and_bom_frontmatter(dirs):
    path = dirs["builtin"] / "win" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbf---\r\nname: win\r\ndescription: d\r\n---\r\nLine $1\r\n")
    [skill] = found(dirs)[0]
    assert skill.body() == "Line $1\n"
    assert skill.render("one") == f"Skill directory: {path.parent.resolve()}\n\nLine one\n"


def test_the_body_is_read_when_the_skill_runs(dirs):
    path = write_skill(dirs["builtin"], "lazy", simple("lazy"), "first\n")
    [skill] = found(dirs)[0]
    path.write_text("---\nname: lazy\ndescription: d\n---\nsecond\n")
    assert skill.body() == "second\n"
    path.unlink()
    with pytest.raises(OSError):
        skill.render()


def test_empty_frontmatter_block_is_missing_fields(dirs):
    (dirs["builtin"] / "e").mkdir()
    (dirs["builtin"] / "e" / "SKILL.md").write_text("---\n---\nbody")
    assert "'name'" in found(dirs)[1][0].message


# -- substitution -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("Review $ARGUMENTS now", "src/ tests/", "Review src/ tests/ now"),
        ("$ARGUMENTS", "", ""),
        ("a $ARGUMENTS b", "", "a  b"),
        ("$ARGUMENTSX stays", "v", "$ARGUMENTSX stays"),
        ("$ARGUMENTS_1 stays", "v", "$ARGUMENTS_1 stays"),
        ("$ARGUMENTS9 stays", "v", "$ARGUMENTS9 stays"),
        ("$ARGUMENTSé stays", "v", "$ARGUMENTSé stays"),
        ("($ARGUMENTS).", "v", "(v)."),
        ("$ARGUMENTS-x $ARGUMENTS/y", "v", "v-x v/y"),
        ("x$ARGUMENTS", "v", "xv"),
        ("$arguments stays", "v", "$arguments stays"),
        ("cost: $$5", "", "cost: $5"),
        ("$$ARGUMENTS", "v", "$ARGUMENTS"),
        ("$$1 and $$$1", "v", "$1 and $v"),
        ("$$$ARGUMENTS", "v", "$v"),
        ("$$$$", "", "$$"),
        ("$1-$2-$3", "a b c", "a-b-c"),
        ("$2 $1", "  first\tsecond\nthird ", "second first"),
        ("$0 $1", "a", "$0 a"),
        ("$4 stays", "a b", "$4 stays"),
        ("$1 stays without args", "", "$1 stays without args"),
        ("$10", "a b", "$10"),
        ("$10", "1 2 3 4 5 6 7 8 9 ten", "ten"),
        ("$01", "a", "$01"),
        ("$1st", "a", "ast"),
        ("$ $x $ trailing $", "a", "$ $x $ trailing $"),
        ("$ARGUMENTS", "price $1 and $$ and $ARGUMENTS", "price $1 and $$ and $ARGUMENTS"),
        ("$1", "$2 b", "$2"),
        ("$ARGUMENTS", r"\1 $& $' \g<0>", r"\1 $& $' \g<0>"),
        ("[$1]", "naïve", "[naïve]"),
    ],
)
def test_substitution(body, args, expected):
    assert substitute(body, args) == expected


def test_substitute_defaults_to_no_arguments():
    assert substitute("x $ARGUMENTS y $1") == "x  y $1"


def test_render_substitutes_first_then_adds_the_directory(tmp_path):
    folder = tmp_path / "odd $1 $ARGUMENTS dir"
    path = write_skill(folder.parent, folder.name, simple("odd"), "\n\nDo $ARGUMENTS.\n")
    skill = discover(tmp_path / "ws", home=tmp_path / "h", builtin=tmp_path)[0][0]
    assert skill.file == path
    assert skill.render("it") == f"Skill directory: {folder.resolve()}\n\nDo it.\n"


# -- slash commands and activation --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/review src/", ("review", "src/")),
        ("  /review", ("review", "")),
        ("/review   a  b  ", ("review", "a  b")),
        ("/review\nline two", ("review", "line two")),
        ("/usr/bin/env is broken", None),
        ("/review/x", None),
        ("please /review", None),
        ("/", None),
        ("", None),
    ],
)
def test_parse_command(text, expected):
    assert parse_command(text) == expected


def test_expand_command(dirs):
    write_skill(dirs["builtin"], "greet", simple("greet"), "Hello $1, all: $ARGUMENTS\n")
    write_skill(dirs["builtin"], "hidden", simple("hidden") + "\nuser-invocable: false")
    catalog = SkillCatalog(dirs["cwd"], home=dirs["home"], builtin=dirs["builtin"])
    text, skill = expand_command("/Greet Ada Lovelace", catalog)
    directory = dirs["builtin"].resolve() / "greet"
    assert skill.name == "greet"
    assert text == (
        f"/Greet Ada Lovelace\n\nSkill directory: {directory}\n\nHello Ada, all: Ada Lovelace\n"
    )
    assert expand_command("/hidden x", catalog) is None
    assert expand_command("/nope x", catalog) is None
    assert expand_command("no command", catalog) is None
    assert expand_command("/greet", None) is None


def test_activation_layers_provider_options_and_keeps_deletions(dirs):
    write_skill(
        dirs["builtin"],
        "a",
        simple("a") + "\nallowed-tools: Read\nproviderOptions: {temperature: 0, topP: null, "
        "reasoning: {effort: low, summary: auto}}",
    )
    write_skill(
        dirs["builtin"],
        "b",
        simple("b") + "\nallowed-tools: Bash(git diff:*)\nproviderOptions: "
        "{reasoning: {effort: high}, stop: [END]}",
    )
    catalog = SkillCatalog(dirs["cwd"], home=dirs["home"], builtin=dirs["builtin"])
    state: dict = {}
    activate(catalog.get("a"), state)
    activate(catalog.get("b"), state)
    activate(catalog.get("a"), state)
    assert state[ACTIVE_KEY] == ["a", "b"]
    assert state[SKILL_STATE_KEY] == {
        "temperature": 0,
        "topP": None,
        "reasoning": {"effort": "low", "summary": "auto"},
        "stop": ["END"],
    }
    assert granted_tools(catalog, state, trusted=True) == ["Read", "Bash(git diff:*)"]
    assert granted_tools(None, state, trusted=True) == []


def test_list_skills_reports_skills_and_warnings(dirs):
    write_skill(dirs["cwd"] / ".agentls" / "skills", "p", simple("p") + "\nversion: 2")
    write_skill(dirs["cwd"] / ".claude" / "skills", "broken", "name: [")
    catalog = SkillCatalog(dirs["cwd"], home=dirs["home"], builtin=dirs["builtin"])
    result = list_skills(dirs["cwd"], catalog).to_wire()
    assert result["skills"] == [
        {
            "name": "p",
            "description": "Does a thing.",
            "source": "project",
            "path": str(dirs["cwd"] / ".agentls" / "skills" / "p" / "SKILL.md"),
            "userInvocable": True,
            "modelInvocable": True,
            "allowedTools": [],
            "version": "2",
        }
    ]
    [warning] = result["warnings"]
    assert warning["path"].endswith("broken/SKILL.md") and "YAML" in warning["message"]


def test_a_project_skill_cannot_name_a_local_model_file(dirs):
    """Issue 19, item 9: only the user names a GGUF file the local provider would load."""
    for layer, name in ((dirs["cwd"] / ".claude" / "skills", "p"), (dirs["home"] / ".agentls" / "skills", "u")):
        write_skill(layer, name, simple(name) + "\nmodel: /tmp/evil.gguf")
    catalog = SkillCatalog(dirs["cwd"], home=dirs["home"], builtin=dirs["builtin"])
    state: dict = {}
    activate(catalog.get("p"), state)
    assert MODEL_KEY not in state
    activate(catalog.get("u"), state)
    assert state[MODEL_KEY] == ("u", "/tmp/evil.gguf")

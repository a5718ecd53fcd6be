"""Claude Code deny and ask rules (`server.agent.rules`) judged on the calls they name."""

from __future__ import annotations

import pytest

from server.agent.rules import judge
from server.tools.base import ToolContext
from server.tools.registry import tools_by_name

TOOLS = tools_by_name()


def verdict(tmp_path, tool, args, *, deny=(), ask=()):
    config = {"permissions": {"deny": list(deny), "ask": list(ask)}}
    ctx = ToolContext(cwd=tmp_path, config=config)
    found = judge(TOOLS[tool], TOOLS[tool].Input.model_validate(args), ctx)
    return found.action if found else None


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm x", "deny"),
        ("echo a && rm -f x", "deny"),
        ("X=1 rm x", "deny"),
        ("/bin/rm x", "deny"),
        ("ls | xargs rm", None),  # xargs runs rm: the rule names the program it sees
        ("sh -c 'rm x'", "ask"),
        ("eval rm x", "ask"),
        ("echo $(rm x)", "deny"),
        ("rmdir d", None),
        ("echo rm", None),
    ],
)
def test_a_command_prefix_rule(tmp_path, command, expected):
    assert verdict(tmp_path, "bash", {"command": command}, deny=["Bash(rm:*)"]) == expected


def test_exact_and_glob_command_rules(tmp_path):
    deny = ["Bash(git push)", "Bash(git * --force)"]
    assert verdict(tmp_path, "bash", {"command": "git push"}, deny=deny) == "deny"
    assert verdict(tmp_path, "bash", {"command": "git push origin"}, deny=deny) is None
    assert verdict(tmp_path, "bash", {"command": "git push origin --force"}, deny=deny) == "deny"


def test_path_rules_cover_every_reading_tool(tmp_path):
    (tmp_path / "secrets").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "secrets")
    deny = ["Read(./secrets/**)", "Read(*.pem)", "Edit(//etc/**)"]
    assert verdict(tmp_path, "read_file", {"path": "secrets/a"}, deny=deny) == "deny"
    assert verdict(tmp_path, "read_file", {"path": "link/a"}, deny=deny) == "deny"
    assert verdict(tmp_path, "grep", {"pattern": "x", "path": "secrets"}, deny=deny) == "deny"
    assert verdict(tmp_path, "read_file", {"path": "deep/down/k.pem"}, deny=deny) == "deny"
    assert verdict(tmp_path, "read_file", {"path": "notes.txt"}, deny=deny) is None
    assert verdict(tmp_path, "write_file", {"path": "/etc/x", "content": ""}, deny=deny) == "deny"
    assert (
        verdict(
            tmp_path, "edit_file", {"path": "a", "old_string": "a", "new_string": "b"}, deny=deny
        )
        is None
    )


def test_whole_tool_domain_and_ask_rules(tmp_path):
    fetch = {"url": "https://docs.example.com/x"}
    assert verdict(tmp_path, "web_fetch", fetch, deny=["WebFetch(domain:*.example.com)"]) == "deny"
    assert verdict(tmp_path, "web_fetch", fetch, deny=["WebFetch(domain:other.org)"]) is None
    assert verdict(tmp_path, "web_fetch", fetch, deny=["WebFetch"]) == "deny"
    assert verdict(tmp_path, "bash", {"command": "git push"}, ask=["Bash(git push:*)"]) == "ask"
    assert (
        verdict(tmp_path, "bash", {"command": "rm x"}, deny=["Bash(rm:*)"], ask=["Bash"]) == "deny"
    )


def test_every_edit_rule_name_covers_the_writing_tools(tmp_path):
    call = {"path": "src/a.py", "content": ""}
    for rule in ("Edit(src/**)", "Write(src/**)", "MultiEdit(src/**)", "NotebookEdit(src/**)"):
        assert verdict(tmp_path, "write_file", call, deny=[rule]) == "deny", rule


def test_a_path_allow_rule_needs_every_real_path(tmp_path):
    from server.agent.rules import allows

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "out").symlink_to(tmp_path.parent)
    ctx = ToolContext(cwd=tmp_path, config={"permissions": {"allow": ["Edit(src/**)"]}})
    tool = TOOLS["write_file"]

    def allowed(path):
        return allows(tool, tool.Input.model_validate({"path": path, "content": ""}), ctx)

    assert allowed("src/a.py") == "Edit(src/**)"
    assert allowed("b.py") is None
    assert allowed("src/out/escape.py") is None  # the link leads outside src

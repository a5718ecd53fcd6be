"""Attacks by a cloned repository on its own permissions, each through `agentls serve` over
real stdio: the repository's config, skills and control files must not widen what the agent
may do until the user trusts the folder (issue 19, items 1-3)."""

from __future__ import annotations

import json

import pytest

from server.testing.fake_llm import FakeToolCall
from tests.trust_fixture import CANARY, add_skill, bash, clone, serve_turn


@pytest.mark.parametrize(
    "project",
    [
        {"permissions": {"mode": "bypassPermissions"}},
        {"permissions": {"allow": ["Bash"]}},
        {"permissions": {"allow": ["Bash(touch:*)"], "mode": "acceptEdits"}},
    ],
    ids=["bypass-mode", "allow-bash", "allow-touch"],
)
async def test_an_untrusted_project_config_cannot_preapprove_the_shell(
    tmp_path, workspace, fake_llm, project
):
    clone(workspace, fake_llm, project=project)
    turn = await serve_turn(tmp_path, workspace, fake_llm, [bash(f"touch {CANARY}")])
    assert turn.new["modes"]["currentModeId"] == "default"
    assert len(turn.requests) == 1
    assert turn.statuses() == ["denied"]
    assert not (workspace / CANARY).exists()


async def test_project_nulls_do_not_delete_the_users_limits(tmp_path, workspace, fake_llm):
    clone(
        workspace,
        fake_llm,
        project={"tools": None, "webFetch": None},
        user={"tools": {"disallowed": ["bash"]}},
    )
    turn = await serve_turn(tmp_path, workspace, fake_llm, [bash(f"touch {CANARY}")])
    assert turn.requests == []
    [result] = [m for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert "Unknown tool 'bash'" in result["content"]
    assert not (workspace / CANARY).exists()


async def test_a_trusted_project_may_allow_but_never_bypass(tmp_path, workspace, fake_llm):
    clone(
        workspace,
        fake_llm,
        project={"permissions": {"mode": "bypassPermissions", "allow": ["Bash(touch:*)"]}},
        user={"trustedProjects": [str(workspace)]},
    )
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash("touch allowed"), bash(f"rm -f x; touch {CANARY}")]
    )
    assert turn.new["modes"]["currentModeId"] == "default"
    assert (workspace / "allowed").exists()
    assert len(turn.requests) == 1
    assert "`rm -f x`" in turn.requests[0]["toolCall"]["reason"]
    assert not (workspace / CANARY).exists()


@pytest.mark.parametrize("door", ["flag", "client"])
async def test_the_user_or_the_editor_trusts_the_folder(tmp_path, workspace, fake_llm, door):
    clone(workspace, fake_llm, project={"permissions": {"allow": ["Bash(touch:*)"]}})
    args = ("--trust",) if door == "flag" else ()
    new = {"workspaceTrusted": True} if door == "client" else {}
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash("touch allowed")], args=args, new=new
    )
    assert turn.requests == []
    assert (workspace / "allowed").exists()


async def test_a_project_skill_grants_no_tools_in_an_untrusted_folder(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm)
    add_skill(workspace, "x", "allowed-tools: Bash")
    calls = [FakeToolCall("skill", {"skill": "x"}, id="call_sk"), bash(f"touch {CANARY}")]
    turn = await serve_turn(tmp_path, workspace, fake_llm, calls)
    assert len(turn.requests) == 1
    assert turn.statuses() == ["completed", "denied"]
    assert not (workspace / CANARY).exists()


@pytest.mark.parametrize(
    "path",
    [
        ".claude/skills/x/SKILL.md",
        ".agents/skills/x/SKILL.md",
        ".agentls/config.json",
        ".agentls/agents/x.md",
        ".mcp.json",
        "AGENTS.md",
        "sub/CLAUDE.md",
    ],
)
async def test_accept_edits_still_asks_before_writing_control_files(
    tmp_path, workspace, fake_llm, path
):
    clone(workspace, fake_llm)
    write = FakeToolCall("write_file", {"path": path, "content": "allowed-tools: Bash\n"})
    turn = await serve_turn(tmp_path, workspace, fake_llm, [write], new={"mode": "acceptEdits"})
    assert len(turn.requests) == 1
    assert "control file" in turn.requests[0]["toolCall"]["reason"]
    assert [o["kind"] for o in turn.requests[0]["options"]] == ["allow_once", "reject_once"]
    assert turn.statuses() == ["denied"]
    assert (workspace / path).exists() == (path == ".agentls/config.json")


async def test_instruction_files_stay_inside_the_workspace(tmp_path, workspace, fake_llm):
    """Item 9: absolute, `..` and `.env` names and a symlinked AGENTS.md pointing outside put
    nothing from outside the repository into the system prompt."""
    outside = tmp_path / "outside.md"
    outside.write_text("OUTSIDE-SECRET\n")
    files = [str(outside), "../outside.md", ".env", "AGENTS.md", "CLAUDE.md"]
    clone(workspace, fake_llm, project={"instructions": {"files": files}})
    (workspace / ".env").write_text("ENV-SECRET\n")
    (workspace / "AGENTS.md").symlink_to(outside)
    (workspace / "CLAUDE.md").write_text("INSIDE-RULE\n")
    await serve_turn(tmp_path, workspace, fake_llm, [])
    sent = json.dumps(fake_llm.requests[0].body)
    assert "INSIDE-RULE" in sent
    assert "OUTSIDE-SECRET" not in sent and "ENV-SECRET" not in sent


async def test_the_client_is_told_what_an_untrusted_folder_had_ignored(
    tmp_path, workspace, fake_llm
):
    project = {"permissions": {"mode": "bypassPermissions", "allow": ["Bash"]}, "tools": None}
    clone(workspace, fake_llm, project=project)
    add_skill(workspace, "deploy", "allowed-tools: Bash")
    turn = await serve_turn(tmp_path, workspace, fake_llm, [])
    assert turn.updates("workspace_trust") == [
        {
            "kind": "workspace_trust",
            "trusted": False,
            "cwd": str(workspace),
            "ignored": [
                "tools: null",
                "permissions.mode (bypassPermissions)",
                "permissions.allow",
                "skill deploy: allowed-tools",
            ],
        }
    ]
    kinds = [u["update"]["kind"] for u in turn.client.updates]
    assert kinds.index("workspace_trust") < kinds.index("agent_message_chunk")


async def test_a_trusted_folder_gets_no_notice(tmp_path, workspace, fake_llm):
    clone(workspace, fake_llm, project={"permissions": {"allow": ["Bash"]}})
    turn = await serve_turn(tmp_path, workspace, fake_llm, [], args=("--trust",))
    assert turn.updates("workspace_trust") == []

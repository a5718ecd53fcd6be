"""Shell allow rules and always-ask guards against commands crafted to slip past them, through
`agentls serve` over real stdio (issue 19, items 6 and 11)."""

from __future__ import annotations

import pytest

from tests.trust_fixture import CANARY, bash, clone, serve_turn

SMUGGLED = [
    f"echo ok; touch {CANARY}",
    f"echo ok && sh -c 'touch {CANARY}'",
    f"echo $(touch {CANARY})",
    f"echo ok | tee <(touch {CANARY})",
    f"echo ok > /dev/null; eval 'touch {CANARY}'",
]


async def test_always_allow_covers_only_commands_made_of_allowed_parts(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm)
    calls = [bash("echo ok", "call_0")] + [bash(c, f"call_{i + 1}") for i, c in enumerate(SMUGGLED)]
    turn = await serve_turn(tmp_path, workspace, fake_llm, calls, answers=("allow_always",))
    asked = [r["toolCall"]["toolCallId"] for r in turn.requests]
    assert asked == [c.id for c in calls]
    assert turn.statuses() == ["completed"] + ["denied"] * len(SMUGGLED)
    assert not (workspace / CANARY).exists()


async def test_a_configured_prefix_rule_does_not_cover_a_second_command(
    tmp_path, workspace, fake_llm
):
    clone(workspace, fake_llm, user={"permissions": {"allow": ["Bash(git status:*)"]}})
    calls = [bash("git status", "call_ok"), bash(f"git status; touch {CANARY}", "call_bad")]
    turn = await serve_turn(tmp_path, workspace, fake_llm, calls)
    assert len(turn.requests) == 1
    assert turn.requests[0]["toolCall"]["toolCallId"] == "call_bad"
    assert f"`touch {CANARY}`" in turn.requests[0]["toolCall"]["reason"]
    assert not (workspace / CANARY).exists()


@pytest.mark.parametrize(
    "command",
    ["cat .e?v > copy.txt", "cat .[e]nv > copy.txt", "rm -r victim", "rm -R victim",
     "rm --recursive victim", "find victim -delete", "find victim -exec rm {} +"],
)
async def test_bypass_mode_still_asks_for_secrets_and_recursive_deletes(
    tmp_path, workspace, fake_llm, command
):
    clone(workspace, fake_llm)
    (workspace / ".env").write_text("TOKEN=secret\n")
    (workspace / "victim").mkdir()
    (workspace / "victim" / "keep.txt").write_text("keep\n")
    turn = await serve_turn(
        tmp_path, workspace, fake_llm, [bash(command)], new={"mode": "bypassPermissions"}
    )
    assert len(turn.requests) == 1
    assert turn.statuses() == ["denied"]
    assert (workspace / "victim" / "keep.txt").exists()
    assert not (workspace / "copy.txt").exists()

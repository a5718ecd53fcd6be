"""AGENTS.md / CLAUDE.md: which files are read, in what order, how they are cut and cached,
and that they reach the model (unit, then over JSON-RPC against the fake OpenAI endpoint)."""

from __future__ import annotations

import os
from pathlib import Path

from server.agent.instructions import HEADER, Instructions, candidate_files
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import new_session, prompt, start


def make_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, repo = tmp_path / "home", tmp_path / "repo"
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    (home / ".agentls").mkdir(parents=True)
    return home, repo, cwd


def test_user_files_then_repository_root_down_to_the_session_folder(tmp_path: Path) -> None:
    home, repo, cwd = make_tree(tmp_path)
    (home / ".agentls" / "AGENTS.md").write_text("Prefer tabs.\n")
    (repo / "AGENTS.md").write_text("Run make test.\n")
    (repo / "CLAUDE.md").write_text("Run make test.\n")  # a copy is read once
    (repo / "pkg" / "CLAUDE.md").write_text("pkg: no new dependencies.\n")
    (cwd / "AGENTS.md").write_text("   \n")  # blank files are skipped
    (tmp_path / "AGENTS.md").write_text("above the repository: never read\n")
    found = Instructions(cwd, home).files()
    assert [(f.label, f.text) for f in found] == [
        ("~/.agentls/AGENTS.md", "Prefer tabs.\n"),
        ("AGENTS.md", "Run make test.\n"),
        ("pkg/CLAUDE.md", "pkg: no new dependencies.\n"),
    ]
    assert Instructions(cwd, home).render() == (
        f"{HEADER}\n\n### ~/.agentls/AGENTS.md\n\nPrefer tabs.\n\n### AGENTS.md\n\n"
        "Run make test.\n\n### pkg/CLAUDE.md\n\npkg: no new dependencies."
    )


def test_outside_a_repository_only_the_session_folder_is_read(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    assert candidate_files(cwd, home) == [
        home / ".agentls" / "AGENTS.md",
        home / ".claude" / "CLAUDE.md",
        cwd / "AGENTS.md",
        cwd / "CLAUDE.md",
    ]
    assert Instructions(cwd, home).render() == ""


def test_a_changed_file_is_read_again_and_a_removed_one_dropped(tmp_path: Path) -> None:
    home, repo, cwd = make_tree(tmp_path)
    path = repo / "AGENTS.md"
    path.write_text("one")
    instructions = Instructions(cwd, home)
    assert [f.text for f in instructions.files()] == ["one"]
    path.write_text("two!")
    os.utime(path, ns=(1, 1))
    assert [f.text for f in instructions.files()] == ["two!"]
    path.unlink()
    assert instructions.files() == []


def test_the_total_is_capped_with_a_note_and_files_can_be_chosen(tmp_path: Path) -> None:
    home, repo, cwd = make_tree(tmp_path)
    (repo / "AGENTS.md").write_text("a" * 30)
    (repo / "CLAUDE.md").write_text("é" * 30)
    text = Instructions(cwd, home, max_bytes=40).render()
    assert text == (
        f"{HEADER}\n\n### AGENTS.md\n\n{'a' * 30}\n\n### CLAUDE.md\n\n{'é' * 5}\n"
        "[... cut: instruction files are limited to 40 bytes in all]"
    )
    only = Instructions.from_config(cwd, home, {"instructions": {"files": ["CLAUDE.md"]}})
    assert [f.label for f in only.files()] == ["CLAUDE.md"]
    off = Instructions.from_config(cwd, home, {"instructions": {"files": []}})
    assert off.render() == ""


async def test_instructions_reach_the_model_over_json_rpc(tmp_path, workspace, fake_llm) -> None:
    (workspace / "AGENTS.md").write_text("Always run `make check` before you finish.\n")
    fake_llm.script(Reply(text="noted"))
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        result = await client.call("session/prompt", prompt(session_id, "hi"))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    [system] = [m for m in fake_llm.requests[0].body["messages"] if m["role"] == "system"]
    assert system["content"].endswith(
        f"{HEADER}\n\n### AGENTS.md\n\nAlways run `make check` before you finish.\n"
    )


async def test_a_file_the_agent_writes_mid_turn_reaches_its_next_call(
    tmp_path, workspace, fake_llm
) -> None:
    """The files are looked for once while the steps only read; a write looks again."""
    brief = "Be brief."
    (workspace / "notes.txt").write_text("hello\n")
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "AGENTS.md", "content": brief})]),
        Reply(text="done"),
    )
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace, mode="bypassPermissions")
        result = await client.call("session/prompt", prompt(session_id, "go"))
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    systems = [
        next(m["content"] for m in r.body["messages"] if m["role"] == "system")
        for r in fake_llm.requests
    ]
    assert [HEADER in s for s in systems] == [False, False, True]
    assert systems[2].endswith("### AGENTS.md\n\nBe brief.\n")

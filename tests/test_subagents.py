"""Subagent profiles, limits, the summary lines and how a subagent's events reach its parent."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.methods import (
    AskQuestionResult,
    PermissionOption,
    Question,
    QuestionOption,
    RequestPermissionResult,
    ToolCallRef,
)
from protocol.updates import (
    AgentMessageChunk,
    Diff,
    Location,
    Plan,
    StepFinish,
    SubagentUpdate,
    ToolCall,
    ToolCallUpdate,
    Usage,
)
from server.agent.delegation import (
    MAX_DEPTH,
    MAX_PER_TURN,
    Budget,
    Delegation,
    LimitError,
    check_limits,
)
from server.agent.profiles import BUILTIN_PROFILES, ProfileRegistry, list_subagents
from server.agent.subagents import SubagentSink


def profiles(tmp_path: Path) -> ProfileRegistry:
    return ProfileRegistry(tmp_path / "ws", home=tmp_path / "home")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_builtin_profiles(tmp_path):
    registry = profiles(tmp_path)
    assert [(p.name, p.max_steps) for p in registry.profiles] == [
        ("explorer", 20),
        ("executor", 40),
        ("design", 30),
    ]
    explorer, executor, design = registry.profiles
    assert explorer.tools == (
        "read_file", "list_dir", "glob", "grep", "search_sessions", "web_fetch", "web_search",
    )  # fmt: skip
    assert executor.tools is None and executor.allows("bash") and executor.allows("task")
    for tool in ("bash", "git", "task", "bash_output"):
        assert not design.allows(tool)
    for tool in ("read_file", "write_file", "edit_file", "web_fetch", "web_search"):
        assert design.allows(tool)
    assert not any(explorer.allows(t) for t in ("write_file", "edit_file", "bash", "task", "git"))
    assert registry.warnings == []


def test_user_profiles_layer_over_builtins(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    write(
        home / ".claude" / "agents" / "migrator.md",
        "---\nname: migrator\ndescription: user level\n---\n",
    )
    write(
        ws / ".claude" / "agents" / "migrator.md",
        "---\nname: migrator\ndescription: Ports migrations.\ntools: Read, Edit, Bash\n"
        "model: claude-haiku-4-5\nmaxTurns: 25\n---\nAlways run the migration tests.\n",
    )
    write(
        ws / ".agentls" / "agents" / "explorer.md",
        "---\ndescription: A stricter explorer.\ntools: [Read, Grep]\n---\n",
    )
    write(ws / ".agentls" / "agents" / "all.md", "---\ndescription: Everything.\n---\n")
    write(ws / ".agentls" / "agents" / "star.md", "---\ndescription: Star.\ntools: '*'\n---\n")
    registry = profiles(tmp_path)
    migrator = registry.get("MIGRATOR")
    assert migrator.description == "Ports migrations."
    assert migrator.tools == ("read_file", "edit_file", "bash")
    assert (migrator.model, migrator.max_steps, migrator.source) == (
        "claude-haiku-4-5",
        25,
        "project",
    )
    assert migrator.prompt == "Always run the migration tests."
    assert "Always run the migration tests." in migrator.role_prompt()
    explorer = registry.get("explorer")
    assert explorer.tools == ("read_file", "grep") and explorer.source == "project"
    assert registry.get("all").tools is None and registry.get("all").max_steps == 40
    assert registry.get("star").tools is None
    assert registry.names() == "explorer, executor, design, migrator, all, star"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nname: x\ndescription: [\n---\n", "invalid YAML"),
        ("---\nname: x\n---\n", "'description'"),
        ("no frontmatter", "no frontmatter"),
        ("---\ndescription: d\nmaxTurns: 0\n---\n", "maxTurns"),
        ("---\ndescription: d\nmaxTurns: many\n---\n", "maxTurns"),
        ("---\nname: two words\ndescription: d\n---\n", "one word"),
    ],
)
def test_a_broken_profile_is_skipped_with_a_warning(tmp_path, text, message):
    path = write(tmp_path / "ws" / ".agentls" / "agents" / "bad.md", text)
    registry = profiles(tmp_path)
    assert [p.name for p in registry.profiles] == ["explorer", "executor", "design"]
    [warning] = registry.warnings
    assert warning.path == str(path) and message in warning.message


def test_summary_lines(tmp_path):
    write(
        tmp_path / "ws" / ".agentls" / "agents" / "long.md",
        "---\ndescription: |\n  " + "word " * 60 + "\n  second line\n---\n",
    )
    lines = profiles(tmp_path).summary_lines()
    assert lines[0] == "## Subagents"
    entries = [line for line in lines if line.startswith("- ")]
    assert [e.split("**")[1] for e in entries] == ["explorer", "executor", "design", "long"]
    assert entries[0] == f"- **explorer**: {BUILTIN_PROFILES[0].description}"
    assert entries[3].endswith("…") and len(entries[3]) < 220 and "second" not in entries[3]


def test_list_subagents(tmp_path):
    result = list_subagents(tmp_path / "ws", profiles(tmp_path)).to_wire()
    assert result["warnings"] == []
    assert result["subagents"][1] == {
        "name": "executor",
        "description": BUILTIN_PROFILES[1].description,
        "source": "builtin",
        "maxSteps": 40,
    }


def test_limits(tmp_path):
    registry = profiles(tmp_path)
    check_limits(Delegation(registry, depth=MAX_DEPTH - 1, budget=Budget(MAX_PER_TURN - 1)))
    with pytest.raises(LimitError, match=r"depth limit.*at most 5 deep.*yourself"):
        check_limits(Delegation(registry, depth=MAX_DEPTH))
    with pytest.raises(LimitError, match=r"32 subagents already ran.*yourself"):
        check_limits(Delegation(registry, budget=Budget(MAX_PER_TURN)))


# -- the sink a subagent reports through --------------------------------------------------------


class ParentSink:
    session_id = "sess_1"
    turn_id = "turn_1"

    def __init__(self):
        self.updates = []
        self.permissions = []
        self.questions = []

    def emit(self, update):
        self.updates.append(update.to_wire())

    async def request_permission(self, tool_call, options):
        self.permissions.append(tool_call.to_wire())
        return RequestPermissionResult.model_validate(
            {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        )

    async def ask_question(self, questions, *, timeout):
        self.questions.append((questions, timeout))
        return AskQuestionResult(answers={"Which?": "a"})


def tool_call(call_id, name, kind, path=None):
    return ToolCall(
        tool_call_id=call_id,
        name=name,
        title=f"{name} {path or ''}".strip(),
        tool_kind=kind,
        input={},
        locations=[Location(path=path)] if path else None,
    )


async def test_tool_activity_becomes_subagent_progress(tmp_path):
    parent = ParentSink()
    sink = SubagentSink(parent, "call_task", "executor", tmp_path)
    sink.emit(AgentMessageChunk(text="thinking out loud"))
    sink.emit(tool_call("c1", "write_file", "edit", str(tmp_path / "src" / "a.py")))
    sink.emit(ToolCallUpdate(tool_call_id="c1", status="in_progress"))
    sink.emit(ToolCallUpdate(tool_call_id="c1", status="completed", output="ok"))
    sink.emit(tool_call("c2", "edit_file", "edit", str(tmp_path / "b.py")))
    sink.emit(ToolCallUpdate(tool_call_id="c2", status="denied", error="no"))
    sink.emit(tool_call("c3", "bash", "execute"))
    d = Diff(path=str(tmp_path / "c.txt"), old_text=None, new_text="x")
    sink.emit(ToolCallUpdate(tool_call_id="c3", status="completed", diff=d))
    sink.emit(tool_call("c4", "write_file", "edit", "/elsewhere/out.txt"))
    sink.emit(ToolCallUpdate(tool_call_id="c4", status="completed"))
    sink.emit(StepFinish(step=1, finish_reason="tool_use", usage=Usage()))
    sink.emit(Plan(entries=[]))
    nested = SubagentUpdate(id="c9", profile="explorer", status="completed", summary="deep")
    sink.emit(nested)
    subagent = [u for u in parent.updates if u["kind"] == "subagent"]
    progress = [(u["status"], u.get("summary")) for u in subagent]
    assert progress == [
        ("running", f"write_file {tmp_path / 'src' / 'a.py'}"),
        ("running", f"edit_file {tmp_path / 'b.py'}"),
        ("running", f"edit_file {tmp_path / 'b.py'} (denied)"),
        ("running", "bash"),
        ("running", "write_file /elsewhere/out.txt"),
        ("completed", "deep"),
    ]
    assert {u["id"] for u in subagent[:-1]} == {"call_task"}
    assert subagent[-1] == {**nested.to_wire(), "id": "call_task/c9"}
    # the calls themselves go up too, nested under the task call; text, steps and plans do not
    calls = [
        (u["kind"], u["toolCallId"], u["parentToolCallId"], u.get("status"))
        for u in parent.updates
        if u["kind"] in ("tool_call", "tool_call_update")
    ]
    assert calls == [
        ("tool_call", "call_task/c1", "call_task", None),
        ("tool_call_update", "call_task/c1", "call_task", "in_progress"),
        ("tool_call_update", "call_task/c1", "call_task", "completed"),
        ("tool_call", "call_task/c2", "call_task", None),
        ("tool_call_update", "call_task/c2", "call_task", "denied"),
        ("tool_call", "call_task/c3", "call_task", None),
        ("tool_call_update", "call_task/c3", "call_task", "completed"),
        ("tool_call", "call_task/c4", "call_task", None),
        ("tool_call_update", "call_task/c4", "call_task", "completed"),
    ]
    assert {u["kind"] for u in parent.updates} == {"subagent", "tool_call", "tool_call_update"}
    assert sink.output_files == ["src/a.py", "c.txt", "/elsewhere/out.txt"]


async def test_permissions_and_questions_go_up_to_the_parent(tmp_path):
    parent = ParentSink()
    sink = SubagentSink(parent, "call_task", "design", tmp_path)
    ref = ToolCallRef(tool_call_id="c1", name="write_file", title="Write x", input={"path": "x"})
    option = PermissionOption(option_id="allow_once", name="Allow", kind="allow_once")
    result = await sink.request_permission(ref, [option])
    assert result.outcome.option_id == "allow_once"
    assert parent.permissions == [
        {
            "toolCallId": "call_task/c1",
            "name": "write_file",
            "title": "design subagent: Write x",
            "input": {"path": "x"},
        }
    ]
    question = Question(question="Which?", options=[QuestionOption(label="a")])
    answer = await sink.ask_question([question], timeout=5)
    assert answer.answers == {"Which?": "a"} and parent.questions == [([question], 5)]
    assert (sink.session_id, sink.turn_id) == ("sess_1", "turn_1")


def test_a_project_agent_cannot_name_a_local_model_file(tmp_path):
    """Only the user names a GGUF file the local provider would load into the process."""
    for root, name in ((tmp_path / "ws" / ".agentls", "p"), (tmp_path / "home" / ".agentls", "u")):
        (root / "agents").mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: d\nmodel: /tmp/evil.gguf\n---\nGo.\n"
        (root / "agents" / f"{name}.md").write_text(text)
    registry = ProfileRegistry(tmp_path / "ws", home=tmp_path / "home")
    assert registry.get("p").model is None
    assert registry.get("u").model == "/tmp/evil.gguf"

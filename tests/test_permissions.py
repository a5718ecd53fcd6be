"""Every rule of the permission policy, through `decide`, `remember` and `options_for` with the
real tools, plus the fail-closed answers and per-call batching in the tool-call runner."""

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from protocol.methods import PermissionOutcome, RequestPermissionResult
from server.agent.state import AgentSession
from server.agent.tool_calls import run_one, run_tool_calls
from server.permissions import (
    ALWAYS_ASK_OPTIONS,
    OPTIONS,
    Decision,
    PermissionState,
    decide,
    options_for,
    remember,
)
from server.providers.base import ProviderSettings
from server.providers.messages import ToolCallPart, ToolResultPart
from server.tools.base import Tool, ToolContext, ToolInput
from server.tools.files import EditFile, ListDir, ReadFile, WriteFile
from server.tools.git import Git
from server.tools.hashed import EditFileHashed
from server.tools.search import Glob, Grep
from server.tools.shell import Bash, BashOutput, KillBash
from server.turn import SessionSpec, UserNotReachable

posix_only = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")

PLAN_DENIES = Decision("deny", "plan mode is read-only: describe the change instead of making it")
ALLOW = Decision("allow")
RM_RF = "the command deletes files recursively without confirmation (rm -rf)"


class FetchInput(ToolInput):
    url: str


class Fetch(Tool):
    """Stands in for web_fetch: a read-only tool of kind fetch."""

    name = "web_fetch"
    description = "Fetch a URL."
    Input = FetchInput
    read_only = True
    kind = "fetch"

    async def run(self, ctx: ToolContext, args: FetchInput) -> str:
        return "page"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(cwd=ws)


def call(tool: Tool, **args: Any) -> tuple[Tool, Any]:
    return tool, tool.Input(**args)


def check(ctx: ToolContext, mode: str, tool_and_args: tuple[Tool, Any]) -> Decision:
    tool, args = tool_and_args
    return decide(tool, args, ctx, PermissionState(mode=mode))


CALLS = {
    "read": call(ReadFile(), path="a.py"),
    "list": call(ListDir(), path="src"),
    "grep": call(Grep(), pattern="x"),
    "glob": call(Glob(), pattern="*.py"),
    "write": call(WriteFile(), path="a.py", content="x"),
    "edit": call(EditFile(), path="a.py", old_string="a", new_string="b"),
    "edit_hashed": call(
        EditFileHashed(), path="a.py", anchor_hash="abc123", expected_line="a", new_line="b"
    ),
    "bash": call(Bash(), command="ls -la"),
    "bash_output": call(BashOutput(), jobId="bash_1"),
    "kill_bash": call(KillBash(), jobId="bash_1"),
    "git_status": call(Git(), args=["status"]),
    "git_branch_list": call(Git(), args=["branch", "-a"]),
    "git_add": call(Git(), args=["add", "a.py"]),
    "git_branch_create": call(Git(), args=["branch", "feature"]),
    "fetch": call(Fetch(), url="https://example.com"),
}
COMMIT = Decision("ask", "git commit records a new commit in the repository history")

# The expected decision per call and mode. Rules: `default` asks for everything but reads;
# `plan` refuses whatever is not read-only; `acceptEdits` frees edit-kind tools only;
# `bypassPermissions` asks for nothing; fetches are never free, even read-only.
MATRIX = {
    "read": ("allow", "allow", "allow", "allow"),
    "list": ("allow", "allow", "allow", "allow"),
    "grep": ("allow", "allow", "allow", "allow"),
    "glob": ("allow", "allow", "allow", "allow"),
    "write": ("ask", "deny", "allow", "allow"),
    "edit": ("ask", "deny", "allow", "allow"),
    "edit_hashed": ("ask", "deny", "allow", "allow"),
    "bash": ("ask", "deny", "ask", "allow"),
    "bash_output": ("allow", "allow", "allow", "allow"),
    "kill_bash": ("ask", "deny", "ask", "allow"),
    "git_status": ("allow", "allow", "allow", "allow"),
    "git_branch_list": ("allow", "allow", "allow", "allow"),
    "git_add": ("ask", "deny", "ask", "allow"),
    "git_branch_create": ("ask", "deny", "ask", "allow"),
    "fetch": ("ask", "deny_offline", "ask", "allow"),
}
MODES = ("default", "plan", "acceptEdits", "bypassPermissions")
RULES = {
    "bash": "bash(ls)",
    "git_add": "git(add)",
    "git_branch_create": "git(branch)",
    "fetch": "web_fetch(example.com)",
}


def expected(name: str, action: str) -> Decision:
    if action == "allow":
        return ALLOW
    if action == "deny":
        return PLAN_DENIES
    if action == "deny_offline":
        return Decision("deny", "plan mode uses local read-only tools only: plan without the web")
    tool, _ = CALLS[name]
    return Decision("ask", "", RULES.get(name, tool.name))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(MATRIX))
def test_mode_by_tool_kind(ctx, name, mode):
    action = MATRIX[name][MODES.index(mode)]
    assert check(ctx, mode, CALLS[name]) == expected(name, action)


@pytest.mark.parametrize("mode", MODES)
def test_git_commit_always_asks_and_plan_refuses_it(ctx, mode):
    decision = check(ctx, mode, call(Git(), args=["commit", "-m", "x"]))
    assert decision == (PLAN_DENIES if mode == "plan" else COMMIT)


# always ask, whatever the mode


ASKING_MODES = ("default", "acceptEdits", "bypassPermissions")


@pytest.mark.parametrize("mode", ASKING_MODES)
@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "rm -fr build",
        "rm -r -f build",
        "rm -Rf /",
        "rm --recursive --force build",
        "sudo rm -rf /var/x",
        "make clean && rm -rf dist",
        "cd x; rm -rf *",
    ],
)
def test_rm_rf_always_asks(ctx, mode, command):
    assert check(ctx, mode, call(Bash(), command=command)) == Decision("ask", RM_RF)


def test_rm_without_recursion_follows_the_mode(ctx):
    for command in ("rm -f a.txt", "rm a.txt"):
        assert check(ctx, "bypassPermissions", call(Bash(), command=command)) == ALLOW


@pytest.mark.parametrize("mode", ASKING_MODES)
@pytest.mark.parametrize(
    "command", ["rm -r build", "rm -R build", "rm --recursive build", "xargs rm -r < list"]
)
def test_recursive_delete_without_force_always_asks(ctx, mode, command):
    reason = "the command deletes files recursively (rm -r)"
    assert check(ctx, mode, call(Bash(), command=command)) == Decision("ask", reason)


def test_plan_mode_refuses_rm_rf_before_asking(ctx):
    assert check(ctx, "plan", call(Bash(), command="rm -rf build")) == PLAN_DENIES


ENV_CALLS = [
    call(ReadFile(), path=".env"),
    call(ReadFile(), path="config/.env.local"),
    call(WriteFile(), path=".env.production", content="A=1"),
    call(EditFile(), path=".env", old_string="A", new_string="B"),
    call(EditFileHashed(), path=".envrc", anchor_hash="abc123", expected_line="", new_line="x"),
]


@pytest.mark.parametrize("mode", ASKING_MODES)
@pytest.mark.parametrize("tool_and_args", ENV_CALLS, ids=lambda c: f"{c[0].name}:{c[1].path}")
def test_env_files_always_ask(ctx, mode, tool_and_args):
    path = tool_and_args[1].path
    reason = f"{path} looks like an environment file and may contain secrets"
    assert check(ctx, mode, tool_and_args) == Decision("ask", reason)


def test_names_that_merely_end_in_env_follow_the_mode(ctx):
    assert check(ctx, "default", call(ReadFile(), path="settings.env")) == ALLOW


def test_reading_env_files_asks_even_in_plan_mode(ctx):
    reason = ".env looks like an environment file and may contain secrets"
    assert check(ctx, "plan", call(ReadFile(), path=".env")) == Decision("ask", reason)


@pytest.mark.parametrize("mode", ASKING_MODES)
def test_shell_commands_touching_env_files_always_ask(ctx, mode):
    reason = "the command touches a .env file, which may contain secrets"
    assert check(ctx, mode, call(Bash(), command="cat .env")) == Decision("ask", reason)


def outside(ctx: ToolContext, raw: str) -> Decision:
    return Decision("ask", f"path outside the workspace: {ctx.resolve(raw)}")


@pytest.mark.parametrize("mode", (*ASKING_MODES, "plan"))
@pytest.mark.parametrize(
    "tool_and_args",
    [
        call(ReadFile(), path="../secret.txt"),
        call(ReadFile(), path="src/../../secret.txt"),
        call(ReadFile(), path="/etc/hosts"),
        call(ListDir(), path=".."),
        call(Grep(), pattern="x", path="/etc"),
        call(Glob(), pattern="*", path="../"),
        call(Git(), args=["diff", "/etc/passwd", "a.txt"]),
        call(Git(), args=["log", "--", "../other"]),
    ],
    ids=lambda c: f"{c[0].name}:{c[0].paths(c[1])[0]}",
)
def test_reads_outside_the_workspace_always_ask(ctx, mode, tool_and_args):
    raw = tool_and_args[0].paths(tool_and_args[1])[0]
    assert check(ctx, mode, tool_and_args) == outside(ctx, raw)


@pytest.mark.parametrize("mode", ASKING_MODES)
@pytest.mark.parametrize(
    "tool_and_args",
    [
        call(WriteFile(), path="../x.txt", content=""),
        call(EditFile(), path="/tmp/x.py", old_string="a", new_string="b"),
        call(Bash(), command="ls", cwd=".."),
        call(Git(), args=["add", "../sibling/a.py"]),
    ],
    ids=lambda c: c[0].name,
)
def test_writes_outside_the_workspace_always_ask(ctx, mode, tool_and_args):
    raw = tool_and_args[0].paths(tool_and_args[1])[0]
    assert check(ctx, mode, tool_and_args) == outside(ctx, raw)


def test_absolute_and_dotdot_paths_that_stay_inside_follow_the_mode(ctx, ws):
    (ws / "src").mkdir()
    for path in (str(ws / "a.py"), "src/../a.py", f"../{ws.name}/a.py", "./src/./b.py"):
        assert check(ctx, "default", call(ReadFile(), path=path)) == ALLOW
        write = call(WriteFile(), path=path, content="")
        assert check(ctx, "acceptEdits", write) == ALLOW


@posix_only
@pytest.mark.parametrize("mode", ASKING_MODES)
def test_symlinks_pointing_out_count_as_outside(ctx, ws, mode):
    elsewhere = ws.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f.txt").write_text("x")
    (ws / "out_dir").symlink_to(elsewhere)
    (ws / "out_file").symlink_to(elsewhere / "f.txt")
    (ws / "dangling_out").symlink_to(elsewhere / "missing.txt")
    for raw in ("out_file", "out_dir/f.txt", "out_dir", "dangling_out", "out_dir/new.txt"):
        assert check(ctx, mode, call(ReadFile(), path=raw)) == outside(ctx, raw)
        assert check(ctx, mode, call(WriteFile(), path=raw, content="")) == outside(ctx, raw)
    assert check(ctx, mode, call(Grep(), pattern="x", path="out_dir")) == outside(ctx, "out_dir")


@posix_only
def test_symlinks_pointing_inside_follow_the_mode(ctx, ws):
    (ws / "real").mkdir()
    (ws / "real" / "a.py").write_text("x")
    (ws / "alias").symlink_to("real")
    assert check(ctx, "default", call(ReadFile(), path="alias/a.py")) == ALLOW
    assert check(ctx, "acceptEdits", call(WriteFile(), path="alias/a.py", content="")) == ALLOW


@posix_only
def test_a_symlink_loop_is_treated_as_outside(ctx, ws):
    (ws / "loop").symlink_to("loop")
    assert check(ctx, "bypassPermissions", call(ReadFile(), path="loop")) == outside(ctx, "loop")


@posix_only
def test_a_workspace_reached_through_a_symlink_is_still_inside(tmp_path):
    (tmp_path / "real_ws").mkdir()
    (tmp_path / "link_ws").symlink_to("real_ws")
    ctx = ToolContext(cwd=tmp_path / "link_ws")
    assert check(ctx, "default", call(ReadFile(), path="a.py")) == ALLOW
    assert check(ctx, "default", call(ReadFile(), path=str(tmp_path / "real_ws/a.py"))) == ALLOW


# allow always / reject always


def test_allow_always_is_remembered_per_tool(ctx):
    state = PermissionState()
    tool, args = call(WriteFile(), path="a.py", content="x")
    first = decide(tool, args, ctx, state)
    assert first == Decision("ask", "", "write_file")
    assert options_for(first) == OPTIONS
    remember(state, first, "allow_always")
    assert state.allow_rules == {"write_file"}
    assert decide(tool, tool.Input(path="other/b.py", content=""), ctx, state) == ALLOW
    edit_tool, edit_args = call(EditFile(), path="a.py", old_string="a", new_string="b")
    assert decide(edit_tool, edit_args, ctx, state) == Decision("ask", "", "edit_file")


def test_allow_always_for_a_command_covers_only_that_prefix(ctx):
    state = PermissionState()
    bash = Bash()
    first = decide(bash, bash.Input(command="  npm test"), ctx, state)
    assert first == Decision("ask", "", "bash(npm test)")
    remember(state, first, "allow_always")
    assert decide(bash, bash.Input(command="npm test -- --watch"), ctx, state) == ALLOW
    assert decide(bash, bash.Input(command="npm run build"), ctx, state) == Decision(
        "ask", "not covered by an allow rule: `npm run build`", "bash(npm run)"
    )


def test_allow_always_for_git_covers_only_that_subcommand(ctx):
    state = PermissionState()
    git = Git()
    first = decide(git, git.Input(args=["add", "a.py"]), ctx, state)
    remember(state, first, "allow_always")
    assert decide(git, git.Input(args=["add", "-A"]), ctx, state) == ALLOW
    branch = decide(git, git.Input(args=["branch", "x"]), ctx, state)
    assert branch == Decision("ask", "", "git(branch)")
    assert decide(git, git.Input(args=["commit", "-m", "x"]), ctx, state) == COMMIT


def test_reject_always_denies_in_every_mode_but_plan_wins(ctx):
    state = PermissionState()
    bash = Bash()
    first = decide(bash, bash.Input(command="curl example.com"), ctx, state)
    remember(state, first, "reject_always")
    assert state.deny_rules == {"bash(curl)"}
    denied = Decision("deny", "the user always rejects bash(curl)")
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        state.mode = mode
        assert decide(bash, bash.Input(command="curl -sS x"), ctx, state) == denied
    state.mode = "plan"
    assert decide(bash, bash.Input(command="curl x"), ctx, state) == PLAN_DENIES
    state.mode = "default"
    assert decide(bash, bash.Input(command="wget x"), ctx, state) == Decision(
        "ask", "", "bash(wget)"
    )


def test_once_answers_are_not_remembered(ctx):
    state = PermissionState()
    tool, args = call(WriteFile(), path="a.py", content="x")
    decision = decide(tool, args, ctx, state)
    remember(state, decision, "allow_once")
    remember(state, decision, "reject_once")
    assert (state.allow_rules, state.deny_rules) == (set(), set())


def test_always_ask_offers_only_once_options_and_cannot_be_remembered(ctx):
    state = PermissionState(mode="bypassPermissions")
    bash = Bash()
    decision = decide(bash, bash.Input(command="rm -rf build"), ctx, state)
    assert options_for(decision) == ALWAYS_ASK_OPTIONS
    assert [o.option_id for o in ALWAYS_ASK_OPTIONS] == ["allow_once", "reject_once"]
    remember(state, decision, "allow_always")
    remember(state, decision, "reject_always")
    assert (state.allow_rules, state.deny_rules) == (set(), set())


def test_an_allow_rule_does_not_silence_always_ask(ctx):
    state = PermissionState(allow_rules={"bash(rm)", "read_file", "write_file"})
    bash = Bash()
    assert decide(bash, bash.Input(command="rm a.txt"), ctx, state) == ALLOW
    assert decide(bash, bash.Input(command="rm -rf a"), ctx, state) == Decision("ask", RM_RF)
    read = ReadFile()
    reason = ".env looks like an environment file and may contain secrets"
    assert decide(read, read.Input(path=".env"), ctx, state) == Decision("ask", reason)
    write = WriteFile()
    args = write.Input(path="../x", content="")
    assert decide(write, args, ctx, state) == outside(ctx, "../x")


def test_plan_mode_refuses_writes_even_with_an_allow_rule(ctx):
    state = PermissionState(mode="plan", allow_rules={"write_file"})
    tool, args = call(WriteFile(), path="a.py", content="x")
    assert decide(tool, args, ctx, state) == PLAN_DENIES


def test_options_are_the_four_answers():
    assert [(o.option_id, o.kind) for o in OPTIONS] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
        ("reject_always", "reject_always"),
    ]


# the runner: unanswered requests fail closed, read-only-ness is per call


class Sink:
    session_id = "s1"
    turn_id = "t1"

    def __init__(self, answer: Any = None) -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.requests: list[Any] = []

    def emit(self, update: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, tool_call, options) -> RequestPermissionResult:
        self.requests.append((tool_call, options))
        if self.answer == "unreachable":
            raise UserNotReachable
        if self.answer is None:
            await anyio.sleep_forever()
        return RequestPermissionResult(
            outcome=PermissionOutcome(outcome="selected", option_id=self.answer)
        )

    async def ask_question(self, questions, *, timeout):
        raise UserNotReachable


def session(ws: Path, tools: list[Tool], mode: str = "default") -> AgentSession:
    return AgentSession(
        spec=SessionSpec(session_id="s1", cwd=ws, config={}),
        settings=ProviderSettings(provider="openai", model="m"),
        tools={t.name: t for t in tools},
        tool_ctx=ToolContext(cwd=ws, session_id="s1"),
        permissions=PermissionState(mode=mode),
        factory=lambda settings: None,
        approval_timeout=0.05,
    )


WRITE = ToolCallPart("c1", "write_file", {"path": "a.txt", "content": "x"})


async def test_no_answer_in_time_is_a_rejection(ws):
    result = await run_one(session(ws, [WriteFile()]), WRITE, Sink(answer=None))
    assert result == ToolResultPart(
        "c1",
        "write_file",
        "The user did not answer the permission request in time; the call was not run.",
        True,
    )
    assert not (ws / "a.txt").exists()


async def test_no_client_to_ask_is_a_rejection(ws):
    result = await run_one(session(ws, [WriteFile()]), WRITE, Sink(answer="unreachable"))
    assert result.is_error
    assert result.content.startswith("Not allowed: this call needs the user's approval")
    assert not (ws / "a.txt").exists()


async def test_allow_always_answer_is_remembered_by_the_runner(ws):
    s = session(ws, [WriteFile()])
    sink = Sink(answer="allow_always")
    await run_one(s, WRITE, sink)
    await run_one(s, ToolCallPart("c2", "write_file", {"path": "b.txt", "content": "y"}), sink)
    assert len(sink.requests) == 1
    assert s.permissions.allow_rules == {"write_file"}
    assert (ws / "b.txt").read_text() == "y"


async def test_plan_mode_runner_refuses_without_asking(ws):
    sink = Sink(answer="allow_once")
    result = await run_one(session(ws, [WriteFile()], mode="plan"), WRITE, sink)
    assert result == ToolResultPart(
        "c1",
        "write_file",
        "Not allowed: plan mode is read-only: describe the change instead of making it.",
        True,
    )
    assert sink.requests == []


class MeetInput(ToolInput):
    read_only: bool


class Meet(Tool):
    """Reports whether another call was running at the same time."""

    name = "meet"
    description = "test"
    Input = MeetInput
    kind = "read"

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0

    def is_read_only(self, args: MeetInput) -> bool:
        return args.read_only

    async def run(self, ctx: ToolContext, args: MeetInput) -> str:
        self.running += 1
        self.peak = max(self.peak, self.running)
        with anyio.move_on_after(3):  # the other call, if it runs alongside, starts meanwhile
            while self.peak < 2:
                await anyio.sleep(0.01)
        self.running -= 1
        return "together" if self.peak >= 2 else "alone"


@pytest.mark.parametrize(("read_only", "outcome"), [(True, "together"), (False, "alone")])
async def test_runner_batches_by_each_calls_read_only_ness(ws, read_only, outcome):
    calls = [ToolCallPart(f"m{i}", "meet", {"read_only": read_only}) for i in range(2)]
    results = await run_tool_calls(session(ws, [Meet()], "bypassPermissions"), calls, Sink())
    assert [r.content for r in results] == [outcome, outcome]


def test_rules_from_claude_code_style_names():
    from server.permissions import rules_from_names

    assert rules_from_names(
        [
            "Read",
            "Bash(npm test:*)",
            "bash",
            "Edit(*)",
            "mcp__db__query",
            "  Grep  ",
            "not a (valid",
        ]
    ) == {"read_file", "bash(npm test)", "bash", "edit_file", "mcp__db__query", "grep"}


def test_allow_always_for_web_fetch_covers_only_that_host(ctx):
    from server.tools.web_fetch import WebFetch

    state, fetch = PermissionState(), WebFetch()
    first = decide(fetch, fetch.Input(url="https://Docs.Python.org./3/library/"), ctx, state)
    assert first == Decision("ask", "", "web_fetch(docs.python.org)")
    remember(state, first, "allow_always")
    again = fetch.Input(url="http://docs.python.org:8080/3/whatsnew/")
    assert decide(fetch, again, ctx, state) == ALLOW
    other = decide(fetch, fetch.Input(url="https://evil.example/?q=docs.python.org"), ctx, state)
    assert other == Decision("ask", "", "web_fetch(evil.example)")
    sub = decide(fetch, fetch.Input(url="https://x.docs.python.org/"), ctx, state)
    assert sub == Decision("ask", "", "web_fetch(x.docs.python.org)")


def test_web_fetch_rules_from_names():
    from server.permissions import rules_from_names

    assert rules_from_names(["WebFetch(domain:Docs.Python.org)", "WebFetch(pypi.org)"]) == {
        "web_fetch(docs.python.org)",
        "web_fetch(pypi.org)",
    }
    assert rules_from_names(["WebFetch"]) == {"web_fetch"}

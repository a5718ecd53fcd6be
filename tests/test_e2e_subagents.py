"""Subagents end to end: the session service and the native engine with the scripted model (a
function of the request decides each reply), plus one run of `agentls serve` over real stdio."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from protocol.methods import (
    AskQuestionResult,
    NewSessionParams,
    PromptParams,
    RequestPermissionResult,
)
from server.engines.native import NativeEngine
from server.providers.messages import ModelRequest, ToolResultPart
from server.providers.scripted import ScriptedProvider, ScriptedReply
from server.sessions.model import ClientCapabilities
from server.sessions.service import ServiceError, SessionService
from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import new_session, prompt, start

ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


class Channel:
    """The client side of the service: records updates, answers interactions."""

    def __init__(self, on_permission: Callable[[Any], dict] | None = None):
        self.capabilities = ClientCapabilities(questions=True, permissions=True)
        self.updates: list[dict] = []
        self.permission_requests: list[dict] = []
        self.question_requests: list[dict] = []
        self.on_permission = on_permission or (lambda params: ALLOW)

    def send_update(self, params):
        self.updates.append(params.to_wire())

    async def request_permission(self, params):
        self.permission_requests.append(params.to_wire())
        return RequestPermissionResult.model_validate(self.on_permission(params))

    async def ask_question(self, params):
        self.question_requests.append(params.to_wire())
        return AskQuestionResult(answers={params.questions[0].question: "blue"})

    def kinds(self, kind: str) -> list[dict]:
        return [u["update"] for u in self.updates if u["update"]["kind"] == kind]


class Harness:
    """A service with one native session whose model is `reply(request)`."""

    def __init__(self, tmp_path: Path, reply, channel: Channel | None = None):
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.provider = ScriptedProvider(reply)
        self.channel = channel or Channel()
        environ = {"HOME": str(tmp_path / "home"), "AGENTLS_AUTO_IMAGE": "0"}
        self.engine = NativeEngine(provider_factory=lambda s: self.provider, environ=environ)
        self.service = SessionService(
            {"native": self.engine}, self.channel, flags={"llm": {"provider": "scripted"}}
        )
        self.session_id = ""

    async def open(self, *, trusted: bool = False) -> Harness:
        params = NewSessionParams(cwd=str(self.workspace), workspace_trusted=trusted or None)
        info = await self.service.new_session(params)
        self.session_id = info.session_id
        return self

    @property
    def handle(self):
        return self.service.get(self.session_id).handle

    async def prompt(self, text: str):
        return await self.service.prompt(
            PromptParams.model_validate(
                {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
            )
        )


def role(request: ModelRequest) -> str:
    """`explorer`, `executor`, ... for a subagent's request; `main` for the user's session."""
    match = re.search(r"^## Your role: (\S+)", request.system, re.MULTILINE)
    return match.group(1) if match else "main"


def results(request: ModelRequest) -> list[ToolResultPart]:
    return [p for m in request.messages if m.role == "tool" for p in m.parts]


def first_user(request: ModelRequest) -> str:
    return next(m.text for m in request.messages if m.role == "user")


def task(profile: str, prompt: str, description: str = "look around", **extra) -> tuple:
    return (
        "task",
        {"subagent_type": profile, "description": description, "prompt": prompt, **extra},
    )


def subagent_updates(channel: Channel) -> list[tuple]:
    return [(u["id"], u["status"], u.get("summary")) for u in channel.kinds("subagent")]


# -- scenarios ----------------------------------------------------------------------------------


async def test_an_explorer_that_tries_to_write_is_refused_and_reports(tmp_path):
    def reply(request):
        if role(request) == "explorer":
            if not results(request):
                return ScriptedReply(
                    tool_calls=[("write_file", {"path": "x.txt", "content": "no"})]
                )
            return ScriptedReply(text="The parser is in src/parse.py. I could not write x.txt.")
        if not results(request):
            return ScriptedReply(tool_calls=[task("explorer", "Where is the parser?")])
        return ScriptedReply(text="done")

    h = await Harness(tmp_path, reply).open()
    result = await h.prompt("find the parser")
    assert result.terminal == "completed"
    assert not (h.workspace / "x.txt").exists()

    main1, child1, child2, main2 = h.provider.requests
    assert [role(r) for r in h.provider.requests] == ["main", "explorer", "explorer", "main"]
    assert "write_file" not in {t.name for t in child1.tools}
    assert {t.name for t in child1.tools} == {
        "read_file", "list_dir", "glob", "grep", "web_fetch", "web_search",
    }  # fmt: skip
    assert first_user(child1) == "Where is the parser?"
    [refused] = results(child2)
    assert refused.is_error
    assert refused.content.startswith("'write_file' is not in the explorer subagent's allowlist")
    [report] = results(main2)
    assert json.loads(report.content) == {
        "summary": "The parser is in src/parse.py. I could not write x.txt.",
        "outputFiles": [],
    }

    assert "## Subagents" in main1.system and "- **explorer**:" in main1.system
    assert "## Skills" in main1.system and "## Your role" not in main1.system
    assert "## Subagents" not in child1.system and "Another agent (not the user)" in child1.system

    assert subagent_updates(h.channel) == [
        ("call_1", "running", "look around"),
        ("call_1", "running", "write_file"),
        ("call_1", "running", "write_file (failed)"),
        ("call_1", "completed", "The parser is in src/parse.py. I could not write x.txt."),
    ]
    calls = [(u["toolCallId"], u.get("parentToolCallId")) for u in h.channel.kinds("tool_call")]
    assert calls == [("call_1", None), ("call_1/call_2", "call_1")]
    ends = [
        (u["toolCallId"], u.get("parentToolCallId"), u["status"])
        for u in h.channel.kinds("tool_call_update")
        if u["status"] != "in_progress"
    ]
    assert ends == [("call_1/call_2", "call_1", "failed"), ("call_1", None, "completed")]
    # Usage rolls up: four model calls of (10, 5) tokens each.
    assert (result.usage.input_tokens, result.usage.output_tokens) == (40, 20)
    assert h.handle.usage.input_tokens == 40


@pytest.mark.parametrize("answer", ["allow", "reject"])
async def test_a_subagents_permission_request_reaches_the_client(tmp_path, answer):
    def reply(request):
        if role(request) == "executor":
            done = results(request)
            if not done:
                return ScriptedReply(
                    tool_calls=[("write_file", {"path": "notes.md", "content": "hi"})]
                )
            return ScriptedReply(text=f"write said: {done[0].content}")
        if not results(request):
            return ScriptedReply(tool_calls=[task("executor", "Write notes.md")])
        return ScriptedReply(text="ok")

    def on_permission(params):
        if answer == "allow":
            return ALLOW
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}, "message": "not now"}

    h = await Harness(tmp_path, reply, Channel(on_permission)).open()
    result = await h.prompt("delegate")
    assert result.terminal == "completed"
    [request] = h.channel.permission_requests
    assert request["sessionId"] == h.session_id and request["turnId"] == result.turn_id
    assert request["toolCall"]["title"].startswith("executor subagent: ")
    assert request["toolCall"]["input"] == {"path": "notes.md", "content": "hi"}
    report = json.loads(results(h.provider.requests[-1])[0].content)
    if answer == "allow":
        assert (h.workspace / "notes.md").read_text() == "hi"
        assert report["outputFiles"] == ["notes.md"]
        assert report["summary"].startswith("write said: ")
    else:
        assert not (h.workspace / "notes.md").exists()
        assert report["outputFiles"] == []
        assert "The user denied this tool call" in report["summary"]
        assert "The user said: not now" in report["summary"]


async def test_a_subagents_question_reaches_the_client(tmp_path):
    def reply(request):
        if role(request) == "executor":
            done = results(request)
            if not done:
                ask = {"question": "Which colour?", "options": ["red", "blue"]}
                return ScriptedReply(tool_calls=[("ask_user_question", ask)])
            return ScriptedReply(text=done[0].content)
        if not results(request):
            return ScriptedReply(tool_calls=[task("executor", "Pick a colour")])
        return ScriptedReply(text="ok")

    h = await Harness(tmp_path, reply).open()
    await h.prompt("design it")
    [question] = h.channel.question_requests
    assert question["questions"][0]["question"] == "Which colour?"
    report = json.loads(results(h.provider.requests[-1])[0].content)
    assert "blue" in report["summary"]


async def test_nesting_stops_at_depth_five(tmp_path):
    def reply(request):
        level = int(first_user(request).split()[-1])
        done = results(request)
        if not done:
            return ScriptedReply(tool_calls=[task("executor", f"level {level + 1}")])
        return ScriptedReply(text=f"level {level}: {done[0].content}"[:1500])

    h = await Harness(tmp_path, reply).open()
    result = await h.prompt("level 0")
    assert result.terminal == "completed"
    levels = [int(first_user(r).split()[-1]) for r in h.provider.requests]
    assert max(levels) == 5, "subagents run at depths 1 to 5"
    deepest = next(r for r in h.provider.requests if first_user(r) == "level 5" and results(r))
    [refused] = results(deepest)
    assert refused.is_error
    assert refused.content == (
        "Subagent depth limit reached: subagents nest at most 5 deep and this one is at the "
        "limit. Do this work yourself instead of delegating it."
    )
    # Every task call shows once, nested under the one that started it, and each subagent's
    # updates name the card of the task call that started it.
    calls = [(u["toolCallId"], u.get("parentToolCallId")) for u in h.channel.kinds("tool_call")]
    assert [c[1] for c in calls] == [None, *[c[0] for c in calls[:-1]]]
    assert all(child.startswith(f"{parent}/") for child, parent in calls[1:])
    cards = {c[0] for c in calls}
    subagents = {u["id"] for u in h.channel.kinds("subagent")}
    assert len(subagents) == 5 and subagents < cards


async def test_at_most_32_subagents_per_turn(tmp_path):
    def reply(request):
        if role(request) == "explorer":
            return ScriptedReply(text=f"ok {first_user(request)}")
        last = request.messages[-2]  # the message before the turn context
        if last.role == "tool":
            return ScriptedReply(text="done")
        count = 33 if last.text == "fan out" else 1
        return ScriptedReply(tool_calls=[task("explorer", f"n{i}") for i in range(count)])

    h = await Harness(tmp_path, reply).open()
    assert (await h.prompt("fan out")).terminal == "completed"
    main = [r for r in h.provider.requests if role(r) == "main"]
    outcomes = results(main[1])
    assert len(outcomes) == 33
    assert [json.loads(o.content)["summary"] for o in outcomes[:32]] == [
        f"ok n{i}" for i in range(32)
    ]
    assert outcomes[32].is_error and outcomes[32].content == (
        "Subagent limit reached: 32 subagents already ran in this turn. Finish the remaining "
        "work yourself without starting more subagents."
    )
    # The count is per top-level turn: the next turn may start subagents again.
    assert (await h.prompt("again")).terminal == "completed"
    last = [r for r in h.provider.requests if role(r) == "main"][-1]
    assert json.loads(results(last)[-1].content)["summary"] == "ok n0"


async def test_background_subagent_and_task_output(tmp_path):
    def reply(request):
        if role(request) == "explorer":
            return ScriptedReply(text="background report", delay=0.01)
        done = results(request)
        if not done:
            return ScriptedReply(tool_calls=[task("explorer", "scan", background=True)])
        if len(done) == 1:
            started = json.loads(done[0].content)
            return ScriptedReply(tool_calls=[("task_output", {"task_id": started["taskId"]})])
        return ScriptedReply(text="got it")

    h = await Harness(tmp_path, reply).open()
    result = await h.prompt("scan in the background")
    assert result.terminal == "completed"
    started, output = results(h.provider.requests[-1])
    assert json.loads(started.content) == {"taskId": "call_1", "status": "running"}
    assert json.loads(output.content) == {
        "taskId": "call_1",
        "status": "completed",
        "summary": "background report",
        "outputFiles": [],
    }
    assert h.handle.background.running_count() == 0
    assert all("Background subagents finished" not in first_user(r) for r in h.provider.requests)


async def test_unreported_background_results_reach_the_model_before_the_turn_ends(tmp_path):
    def reply(request):
        if role(request) == "explorer":
            return ScriptedReply(text="late news", delay=0.02)
        last = request.messages[-2]  # the message before the turn context
        if not results(request):
            return ScriptedReply(tool_calls=[task("explorer", "scan", background=True)])
        if last.role == "user" and last.text.startswith("Background subagents finished"):
            return ScriptedReply(text="final answer")
        return ScriptedReply(text="waiting for the scan")

    h = await Harness(tmp_path, reply).open()
    result = await h.prompt("go")
    assert result.terminal == "completed"
    report = h.provider.requests[-1].messages[-2].text
    assert report.startswith("Background subagents finished:\n- call_1 (explorer: look around):")
    assert "late news" in report
    text = "".join(u["text"] for u in h.channel.kinds("agent_message_chunk"))
    assert text == "waiting for the scanfinal answer"


@pytest.mark.parametrize("background", [True, False])
async def test_cancel_during_a_subagent_leaves_no_running_task(tmp_path, background):
    def reply(request):
        if role(request) == "explorer":
            return ScriptedReply(text=" ".join(["slow"] * 200), delay=0.05)
        if not results(request):
            return ScriptedReply(tool_calls=[task("explorer", "crawl", background=background)])
        return ScriptedReply(tool_calls=[("task_output", {"task_id": "call_1"})])

    h = await Harness(tmp_path, reply).open()
    outcome = {}

    async def run():
        outcome["result"] = await h.prompt("crawl")

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(60):
            while sum(role(r) == "explorer" for r in h.provider.requests) == 0 or not [
                u for u in h.channel.kinds("subagent") if u["status"] == "running"
            ]:
                await anyio.sleep(0.01)
        h.service.cancel(h.session_id)
    assert outcome["result"].terminal == "aborted"
    assert h.handle.background.running_count() == 0
    statuses = [u["status"] for u in h.channel.kinds("subagent")]
    assert statuses[0] == "running" and statuses[-1] == "aborted"
    assert h.channel.updates[-1]["update"]["kind"] == "turn_end"
    count, requests = len(h.channel.updates), len(h.provider.requests)
    await anyio.sleep(0.3)
    assert (len(h.channel.updates), len(h.provider.requests)) == (count, requests)


async def test_unknown_profile_and_failing_subagent(tmp_path):
    def reply(request):
        if role(request) == "explorer":
            return ScriptedReply(error="the model fell over")
        done = results(request)
        if not done:
            return ScriptedReply(tool_calls=[task("wizard", "x"), task("explorer", "y")])
        return ScriptedReply(text="carrying on")

    h = await Harness(tmp_path, reply).open()
    result = await h.prompt("go")
    assert result.terminal == "completed"
    unknown, failed = results(h.provider.requests[-1])
    assert unknown.is_error and unknown.content == (
        "Unknown subagent type 'wizard'. Available: explorer, executor, design."
    )
    assert failed.is_error and failed.content.startswith("The subagent failed: ")
    assert "the model fell over" in failed.content
    assert subagent_updates(h.channel)[-1][:2] == ("call_2", "failed")


async def test_a_profile_from_the_project_and_its_model(tmp_path):
    agents = tmp_path / "ws" / ".agentls" / "agents"
    agents.mkdir(parents=True)
    (agents / "counter.md").write_text(
        "---\ndescription: Counts lines.\ntools: Read\nmodel: scripted-small\nmaxTurns: 2\n---\n"
        "Count carefully.\n"
    )

    def reply(request):
        if role(request) == "counter":
            return ScriptedReply(tool_calls=[("read_file", {"path": "missing.txt"})])
        if not results(request):
            return ScriptedReply(tool_calls=[task("counter", "count")])
        return ScriptedReply(text="ok")

    h = await Harness(tmp_path, reply).open()
    await h.prompt("count")
    child = [r for r in h.provider.requests if role(r) == "counter"]
    assert [r.model for r in child] == ["scripted-small", "scripted-small"]
    assert "Count carefully." in child[0].system
    assert {t.name for t in child[0].tools} == {"read_file"}
    report = json.loads(results(h.provider.requests[-1])[0].content)
    assert report["summary"].endswith("(It stopped at its limit of 2 steps.)")
    assert h.handle.model == "scripted", "the parent keeps its model"


# -- over real stdio ----------------------------------------------------------------------------


def openai_role(body: dict) -> str:
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    match = re.search(r"^## Your role: (\S+)", system, re.MULTILINE)
    return match.group(1) if match else "main"


async def test_subagent_permission_over_json_rpc(tmp_path, workspace, fake_llm):
    def reply(body):
        tool_results = [m for m in body["messages"] if m["role"] == "tool"]
        if openai_role(body) == "executor":
            if not tool_results:
                args = {"path": "plan.md", "content": "# Plan\n"}
                return Reply(tool_calls=[FakeToolCall("write_file", args)])
            return Reply(text=f"wrote plan.md: {tool_results[0]['content'][:60]}")
        if not tool_results:
            args = {"subagent_type": "executor", "description": "write plan", "prompt": "Plan."}
            return Reply(tool_calls=[FakeToolCall("task", args, id="call_task")])
        return Reply(text="the plan is written")

    fake_llm.script(*[reply] * 4)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize()
        session_id = await new_session(client, workspace)
        result = await asyncio.wait_for(
            client.call("session/prompt", prompt(session_id, "plan")), 30
        )
    finally:
        await client.close()
    assert result["terminal"] == "completed", result
    [request] = client.permission_requests
    assert request["toolCall"]["name"] == "write_file"
    assert request["toolCall"]["title"].startswith("executor subagent: ")
    assert (workspace / "plan.md").read_text() == "# Plan\n"
    subagent = [u["update"] for u in client.updates if u["update"]["kind"] == "subagent"]
    assert {u["id"] for u in subagent} == {"call_task"}
    assert subagent[-1]["status"] == "completed"
    assert subagent[-1]["outputFiles"] == ["plan.md"]
    assert subagent[-1]["summary"].startswith("wrote plan.md")


async def test_a_session_can_run_as_a_profile(tmp_path):
    h = Harness(tmp_path, lambda request: ScriptedReply(text="looked"))
    info = await h.service.new_session(NewSessionParams(cwd=str(h.workspace), subagent="explorer"))
    h.session_id = info.session_id
    await h.prompt("look")
    [request] = h.provider.requests
    assert "## Your role: explorer" in request.system
    assert "Another agent" not in request.system, "the user is talking to it directly"
    assert "write_file" not in {t.name for t in request.tools}
    assert h.handle.max_steps == 20
    with pytest.raises(ServiceError) as err:
        await h.service.new_session(NewSessionParams(cwd=str(h.workspace), subagent="wizard"))
    assert "unknown subagent profile 'wizard'" in str(err.value)

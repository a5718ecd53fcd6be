"""Background subagents outlive the turn that started them, through the JSON-RPC door, for a
client that shows turns it did not prompt (`reportTurns`): the turn ends at once, the user can
prompt again, a report that arrives while the session is idle runs a turn of its own, and one
subagent can be stopped by the model (`kill_task`) or by the user (`subagents/stop`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, new_session, prompt, start

CAPS = {"permissions": True, "questions": True, "reportTurns": True}
SUBTASK = "SUBTASK: count the Python files under src/ and report the number."


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


class Router:
    """The fake model's replies, kept apart for the user's session and its subagent; the
    subagent's first reply waits for `release`."""

    def __init__(self, parent: list[Any], sub: list[Reply]):
        """`parent`: replies, or functions of the request body giving one."""
        self.parent, self.sub = parent, sub
        self.release = threading.Event()
        self.sub_asked = threading.Event()
        self.parent_bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        users = [m for m in body["messages"] if m["role"] == "user"]
        if users and SUBTASK in text_of(users[0]):
            self.sub_asked.set()
            self.release.wait(120)
            return self.sub.pop(0)
        self.parent_bodies.append(body)
        reply = self.parent.pop(0)
        return reply(body) if callable(reply) else reply


def background_task() -> FakeToolCall:
    args = {
        "subagent_type": "explorer",
        "description": "count files",
        "prompt": SUBTASK,
        "background": True,
    }
    return FakeToolCall("task", args, id="call_bg")


async def until(check, timeout: float = 120.0) -> Any:
    async def poll():
        while not (found := await check()):
            await asyncio.sleep(0.05)
        return found

    return await asyncio.wait_for(poll(), timeout)


async def listed(client: AgentClient, session_id: str) -> list[dict[str, Any]]:
    result = await client.call("subagents/list", {"sessionId": session_id})
    return result["background"]


@asynccontextmanager
async def opened(
    tmp_path, workspace, fake_llm, router: Router
) -> AsyncIterator[tuple[AgentClient, str]]:
    """`agentls serve` on the routed fake model, a client with `reportTurns`, one session; on
    the way out the subagent is released (so no fake-model thread stays blocked)."""
    fake_llm.script(*[router] * 6)
    client = await start(tmp_path, workspace, fake_llm)
    try:
        await client.initialize(CAPS)
        yield client, await new_session(client, workspace)
        assert fake_llm.refusals == []
    finally:
        router.release.set()
        await client.close()


def turn_ids(client: AgentClient) -> list[str]:
    seen: list[str] = []
    for update in client.updates:
        if update["turnId"] not in seen:
            seen.append(update["turnId"])
    return seen


async def test_a_report_that_arrives_while_idle_runs_a_turn_of_its_own(
    tmp_path, workspace, fake_llm
):
    router = Router(
        parent=[
            Reply(tool_calls=[background_task()]),
            Reply(text="Counting in the background."),
            Reply(text="The count is in: 3 Python files."),
            Reply(text="Yes, 3."),
        ],
        sub=[Reply(text="There are 3 Python files under src/.")],
    )
    async with opened(tmp_path, workspace, fake_llm, router) as (client, session_id):
        first = await client.call("session/prompt", prompt(session_id, "count them in the background"))
        assert first["terminal"] == "completed"  # the turn did not wait for its subagent
        await asyncio.wait_for(asyncio.to_thread(router.sub_asked.wait, 120), 130)
        running = await listed(client, session_id)
        assert [(b["taskId"], b["status"], b["turnId"]) for b in running] == [
            ("call_bg", "running", first["turnId"])
        ]
        assert running[0]["reported"] is False

        router.release.set()
        end = await client.wait_for(
            lambda u: u["update"]["kind"] == "turn_end" and u["turnId"] != first["turnId"]
        )
        report_turn = end["turnId"]
        assert end["update"]["terminal"] == "completed"
        ours = [u["update"] for u in client.updates if u["turnId"] == report_turn]
        assert ours[0]["kind"] == "user_message_chunk" and ours[0]["origin"] == "report"
        assert "There are 3 Python files under src/." in ours[0]["text"]
        finals = [u for u in ours if u["kind"] == "subagent"]
        assert [(u["id"], u["status"]) for u in finals] == [("call_bg", "completed")]
        said = "".join(u["text"] for u in ours if u["kind"] == "agent_message_chunk")
        assert said == "The count is in: 3 Python files."
        # the model got the report as the conversation's next message, after the first turn
        sent = router.parent_bodies[2]["messages"]
        said_before = max(i for i, m in enumerate(sent) if m["role"] == "assistant")
        assert "Counting in the background." in text_of(sent[said_before])
        after = "\n".join(text_of(m) for m in sent[said_before + 1 :])
        assert "There are 3 Python files under src/." in after
        assert (await listed(client, session_id))[0]["reported"] is True

        again = await client.call("session/prompt", prompt(session_id, "so three?"))
        assert again["terminal"] == "completed"
        assert turn_ids(client) == [first["turnId"], report_turn, again["turnId"]]
        assert fake_llm.refusals == []


async def test_the_model_stops_a_background_subagent_with_kill_task(
    tmp_path, workspace, fake_llm
):
    kill = FakeToolCall("kill_task", {"task_id": "call_bg"}, id="call_kill")
    router = Router(
        parent=[
            Reply(tool_calls=[background_task()]),
            Reply(tool_calls=[kill]),
            Reply(text="Stopped it."),
            Reply(text="Nothing is running."),
        ],
        sub=[Reply(text="never sent")],
    )
    async with opened(tmp_path, workspace, fake_llm, router) as (client, session_id):
        # the kill is the model's second call: let the subagent be asked first
        turn = asyncio.ensure_future(client.call("session/prompt", prompt(session_id, "go")))
        first = await asyncio.wait_for(turn, 120)
        assert first["terminal"] == "completed"
        results = [
            u["update"]
            for u in client.updates
            if u["update"]["kind"] == "tool_call_update" and u["update"]["toolCallId"] == "call_kill"
        ]
        assert results[-1]["status"] == "completed"
        assert '"status": "aborted"' in results[-1]["output"]
        stopped = [
            u["update"]["status"] for u in client.updates if u["update"]["kind"] == "subagent"
        ]
        assert stopped[-1] == "aborted"
        assert [b["status"] for b in await listed(client, session_id)] == ["aborted"]
        again = await client.call("session/prompt", prompt(session_id, "anything left?"))
        assert again["terminal"] == "completed"
        # the model stopped it itself: no report of it, and no turn the user did not start
        told = "\n".join(text_of(m) for m in router.parent_bodies[-1]["messages"])
        assert "Background subagents finished" not in told
        assert turn_ids(client) == [first["turnId"], again["turnId"]]
        assert fake_llm.refusals == []


async def test_the_user_stops_a_background_subagent_and_the_model_hears_of_it(
    tmp_path, workspace, fake_llm
):
    router = Router(
        parent=[
            Reply(tool_calls=[background_task()]),
            Reply(text="Counting in the background."),
            Reply(text="You stopped the count."),
        ],
        sub=[Reply(text="never sent")],
    )
    async with opened(tmp_path, workspace, fake_llm, router) as (client, session_id):
        first = await client.call("session/prompt", prompt(session_id, "count in the background"))
        assert first["terminal"] == "completed"
        stop = {"sessionId": session_id, "taskId": "call_bg"}
        assert await client.call("subagents/stop", stop) == {"stopped": True}

        async def aborted():
            return [b["status"] for b in await listed(client, session_id)] == ["aborted"]

        await until(aborted)
        assert await client.call("subagents/stop", stop) == {"stopped": False}
        again = await client.call("session/prompt", prompt(session_id, "how many?"))
        assert again["terminal"] == "completed"
        # no turn of its own for a stop the user made; the model hears of it at its next call
        assert turn_ids(client) == [first["turnId"], again["turnId"]]
        sent = router.parent_bodies[-1]["messages"]
        told = "\n".join(text_of(m) for m in sent if m["role"] == "user")
        assert "call_bg" in told and "aborted" in told
        shown = [u["update"] for u in client.updates if u["turnId"] == again["turnId"]]
        assert any(u["kind"] == "user_message_chunk" and u.get("origin") == "report" for u in shown)
        try:
            await client.call("subagents/stop", {"sessionId": session_id, "taskId": "nope"})
        except Exception as exc:
            assert "no background subagent 'nope'" in str(exc)
        else:
            raise AssertionError("stopping an unknown subagent must fail")


async def test_a_later_turn_collects_a_background_report_with_task_output(
    tmp_path, workspace, fake_llm
):
    collect = FakeToolCall("task_output", {"task_id": "call_bg"}, id="call_collect")

    def later(body: dict[str, Any]) -> Reply:
        router.release.set()  # the subagent answers while this turn waits for it
        return Reply(tool_calls=[collect])

    router = Router(
        parent=[
            Reply(tool_calls=[background_task()]),
            Reply(text="Counting in the background."),
            later,
            Reply(text="3 Python files."),
        ],
        sub=[Reply(text="There are 3 Python files under src/.")],
    )
    async with opened(tmp_path, workspace, fake_llm, router) as (client, session_id):
        first = await client.call("session/prompt", prompt(session_id, "count in the background"))
        assert first["terminal"] == "completed"
        again = await client.call("session/prompt", prompt(session_id, "wait for the count"))
        assert again["terminal"] == "completed"
        collected = [
            u["update"]
            for u in client.updates
            if u["update"]["kind"] == "tool_call_update"
            and u["update"]["toolCallId"] == "call_collect"
            and u["update"]["status"] == "completed"
        ]
        assert "There are 3 Python files under src/." in collected[0]["output"]
        # collected by the model itself: not handed to it again, and no turn of its own
        told = "\n".join(text_of(m) for m in router.parent_bodies[-1]["messages"])
        assert "Background subagents finished" not in told
        assert turn_ids(client) == [first["turnId"], again["turnId"]]
        assert (await listed(client, session_id))[0]["reported"] is True
        assert fake_llm.refusals == []

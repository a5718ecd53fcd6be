"""What went wrong with real providers' replies, replayed through `agentls serve` against the
strict loopback fake in the shapes those replies had: a whitespace-only text block after
adaptive thinking, tool call ids a provider repeats, a finish reason that does not match the
reply, and the usage of a call an error ended after its usage was sent.
"""

from __future__ import annotations

import re

import pytest
import pytest_asyncio

from server.testing.fake_llm import FakeToolCall, Reply
from tests.agent_client import AgentClient, server_env
from tests.conftest import write_project_config
from tests.test_e2e_providers import KEYS, messages, open_session, prompt

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    agent = AgentClient()
    await agent.start(server_env(home, **KEYS))
    await agent.initialize()
    agent.user_config = home / "config" / "agentls" / "config.json"
    agent.user_config.parent.mkdir(parents=True)
    yield agent
    await agent.close()


def steps(updates: list[dict]) -> list[str]:
    return [u["finishReason"] for u in updates if u["kind"] == "step_finish"]


LIST = FakeToolCall("list_dir", {})
THOUGHT = {"type": "thinking", "thinking": "The listing will tell."}
BLANK = {"type": "text", "text": "\n\n"}


@pytest.mark.parametrize(
    "blocks", [[BLANK], [THOUGHT, BLANK], [BLANK, THOUGHT]], ids=["alone", "after", "before"]
)
async def test_a_blank_text_block_after_adaptive_thinking_is_not_sent_back(
    client, workspace, fake_llm, blocks
) -> None:
    fake_llm.script(Reply(blocks=blocks, tool_calls=[LIST]), Reply(text="It is empty."))
    session_id = await open_session(
        client, workspace, fake_llm, "anthropic", model="claude-opus-4-6"
    )
    result, _ = await prompt(client, session_id, "what is here?", think="hard")
    assert result["terminal"] == "completed", result.get("error")
    assert fake_llm.refusals == []
    [assistant] = [
        m for m in messages("anthropic", fake_llm.requests[1].body) if m["role"] == "assistant"
    ]
    assert [b["type"] for b in assistant["content"]] == [
        b["type"] for b in blocks if b is not BLANK
    ] + ["tool_use"]


async def test_a_blank_reply_is_left_out_of_the_next_turn(client, workspace, fake_llm) -> None:
    fake_llm.script(Reply(blocks=[THOUGHT, BLANK]), Reply(text="Still here."))
    session_id = await open_session(
        client, workspace, fake_llm, "anthropic", model="claude-opus-4-6"
    )
    for text in ("hm", "and now?"):
        result, _ = await prompt(client, session_id, text, think="hard")
        assert result["terminal"] == "completed", result.get("error")
    assert fake_llm.refusals == []


async def test_repeated_tool_call_ids_are_made_unique(client, workspace, fake_llm) -> None:
    """An OpenRouter route that numbers every call `0`: three in one reply, one more later."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text(f"this is {name}\n")
    read = [FakeToolCall("read_file", {"path": n}, id="0") for n in ("a.txt", "b.txt", "c.txt")]
    fake_llm.script(
        Reply(tool_calls=read),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "a.txt"}, id="0")]),
        Reply(text="Three files."),
    )
    session_id = await open_session(
        client, workspace, fake_llm, "openrouter", model="qwen/qwen3-coder"
    )
    result, updates = await prompt(client, session_id, "read them")
    assert result["terminal"] == "completed", result.get("error")
    assert fake_llm.refusals == []
    cards = [u["toolCallId"] for u in updates if u["kind"] == "tool_call"]
    assert len(cards) == 4 and len(set(cards)) == 4
    last = messages("openrouter", fake_llm.requests[2].body)
    calls = {
        c["id"]: c["function"]["arguments"]
        for m in last
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or []
    }
    results = {m["tool_call_id"]: m["content"] for m in last if m["role"] == "tool"}
    assert calls.keys() == results.keys() and len(calls) == 4
    for call_id, arguments in calls.items():
        name = arguments.split('"path": "')[1].split('"')[0]
        assert f"this is {name}" in results[call_id]


@pytest.mark.parametrize(
    ("provider", "model", "last"),
    [
        # the service's finish reason says tool calls; the reply holds none
        (
            "deepseek",
            "deepseek-reasoner",
            Reply(thinking="Done.", text="Empty.", stop_reason="tool_use"),
        ),
        ("moonshot", "kimi-k2.5", Reply(thinking="Done.", text="Empty.", stop_reason="tool_use")),
        ("anthropic", "claude-sonnet-4-6", Reply(text="Empty.", stop_reason="tool_use")),
        # reasoning details arrive after the text, with a plain stop
        ("openrouter", "anthropic/claude-sonnet-4.6", Reply(thinking="Done.", text="Empty.")),
    ],
)
async def test_the_finish_reason_follows_what_the_reply_holds(
    client, workspace, fake_llm, provider, model, last
) -> None:
    fake_llm.script(Reply(thinking="Look first.", tool_calls=[LIST]), last)
    session_id = await open_session(client, workspace, fake_llm, provider, model=model)
    result, updates = await prompt(client, session_id, "what is here?")
    assert result["terminal"] == "completed", result.get("error")
    assert steps(updates) == ["tool_use", "end_turn"]
    assert result["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    ("provider", "reply", "used"),
    [
        # Anthropic sent the input tokens (and one output token) in message_start
        ("anthropic", Reply(text="half a", stream_error="Overloaded", usage=(100, 7)), (100, 1)),
        # OpenRouter sent its finish chunk with the usage, then the error
        (
            "openrouter",
            Reply(
                text="half a", stream_error="upstream broke", stop_reason="end_turn", usage=(100, 7)
            ),
            (100, 7),
        ),
    ],
)
@pytest.mark.parametrize("retries", [0, 1])
async def test_a_call_ended_by_a_stream_error_keeps_its_usage(
    client, workspace, fake_llm, provider, reply, used, retries
) -> None:
    fake_llm.script(*[reply] * (retries + 1))
    model = {"anthropic": "claude-sonnet-4-6", "openrouter": "moonshotai/kimi-k2"}[provider]
    session_id = await open_session(
        client, workspace, fake_llm, provider, model=model, maxRetries=retries
    )
    result, _ = await prompt(client, session_id, "write a lot")
    assert result["terminal"] == "failed"
    assert len(fake_llm.requests) == retries + 1
    calls = retries + 1
    assert result["usage"] == {
        "inputTokens": used[0] * calls,
        "outputTokens": used[1] * calls,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
    }


async def test_tool_call_ids_another_provider_made_reach_anthropic_in_its_pattern(
    tmp_path, workspace, fake_llm
) -> None:
    """Kimi names its calls `functions.list_dir:0`; Anthropic takes only `[a-zA-Z0-9_-]` ids."""
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("list_dir", {}, id="functions.list_dir:0")]),
        Reply(text="Empty."),
        Reply(text="Still empty."),
    )
    write_project_config(
        workspace,
        {"llm": {"provider": "moonshot", "model": "kimi-k2-0905-preview", "maxRetries": 0}},
    )
    urls = {
        "MOONSHOT_BASE_URL": fake_llm.openai_base_url,
        "ANTHROPIC_BASE_URL": fake_llm.anthropic_base_url,
    }
    agent = AgentClient()
    await agent.start(server_env(tmp_path, **KEYS, **urls))
    try:
        await agent.initialize()
        session_id = (await agent.call("session/new", {"cwd": str(workspace)}))["sessionId"]
        first, _ = await prompt(agent, session_id, "what is here?")
        await agent.call(
            "session/set_model", {"sessionId": session_id, "modelId": "claude-sonnet-4-6"}
        )
        second, _ = await prompt(agent, session_id, "and now?")
    finally:
        await agent.close()
    assert first["terminal"] == second["terminal"] == "completed", second.get("error")
    assert fake_llm.refusals == []
    last = fake_llm.requests[2]
    assert last.path.endswith("/messages")
    blocks = [
        b for m in last.body["messages"] if isinstance(m["content"], list) for b in m["content"]
    ]
    [use] = [b for b in blocks if b["type"] == "tool_use"]
    [result] = [b for b in blocks if b["type"] == "tool_result"]
    assert use["id"] == result["tool_use_id"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]+", use["id"])

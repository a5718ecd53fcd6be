"""Every provider end to end: a real client drives `agentls serve` over stdio, the model is the
loopback fake speaking that provider's wire format, and each test asserts what went over it.

One server process serves the whole module; each test gets its own workspace, project config
and fake server, so sessions never share anything. The fake's URL goes in the user config
(a project config may not set `llm.baseUrl`), which the server reads at every `session/new`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from server.providers import images
from server.testing.fake_llm import FakeModelServer, FakeToolCall, Reply
from tests.agent_client import AgentClient, kinds, server_env
from tests.conftest import write_project_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

KEY_VARS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "volcengine": "ARK_API_KEY",
    "qwen": "DASHSCOPE_API_KEY",
    "moonshot": "MOONSHOT_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}
KEYS = {variable: f"key-{provider}" for provider, variable in KEY_VARS.items()}
WIRE = {"anthropic": "anthropic", "ollama": "ollama"}  # everything else speaks OpenAI's
MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-4.1",
    "deepseek": "deepseek-chat",
    "volcengine": "doubao-seed-1-6-250615",
    "qwen": "qwen-plus",
    "moonshot": "kimi-k2-0905-preview",
    "openrouter": "anthropic/claude-sonnet-4.6",
    "ollama": "llama3.2",
}
MAIN = ["anthropic", "openai", "deepseek", "ollama"]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(24))
PNG_B64 = base64.b64encode(PNG).decode()


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


def wire(provider: str) -> str:
    return WIRE.get(provider, "openai")


def base_url(fake: FakeModelServer, provider: str) -> str:
    urls = {"anthropic": fake.anthropic_base_url, "ollama": fake.ollama_base_url}
    return urls.get(wire(provider), fake.openai_base_url)


async def open_session(client, workspace: Path, fake, provider: str, **llm) -> str:
    llm = {"provider": provider, "model": MODELS[provider], "maxRetries": 2, **llm}
    write_project_config(workspace, {"llm": llm})
    client.user_config.write_text(json.dumps({"llm": {"baseUrl": base_url(fake, provider)}}))
    return (await client.call("session/new", {"cwd": str(workspace)}))["sessionId"]


async def prompt(client, session_id: str, text: str, **options) -> tuple[dict, list[dict]]:
    params: dict[str, Any] = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    if options:
        params["options"] = options
    result = await client.call("session/prompt", params)
    return result, [u["update"] for u in client.updates if u["turnId"] == result["turnId"]]


def streamed(updates: list[dict], kind: str = "agent_message_chunk") -> list[str]:
    return [u["text"] for u in updates if u["kind"] == kind]


def auth(headers: dict[str, str]) -> str | None:
    value = headers.get("x-api-key") or headers.get("authorization")
    return value.removeprefix("Bearer ") if value else None


def messages(provider: str, body: dict) -> list[dict]:
    """Wire messages without OpenAI/Ollama's leading system message."""
    return [m for m in body["messages"] if m.get("role") != "system"]


def tool_results(provider: str, body: dict) -> list[str]:
    if wire(provider) == "anthropic":
        blocks = [b for m in body["messages"] for b in m["content"] if isinstance(b, dict)]
        return [b["content"] for b in blocks if b.get("type") == "tool_result"]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def assistant_texts(provider: str, body: dict) -> list[str]:
    found = []
    for m in messages(provider, body):
        if m["role"] != "assistant":
            continue
        if isinstance(m["content"], list):
            found += [b["text"] for b in m["content"] if b["type"] == "text"]
        elif m["content"]:
            found.append(m["content"])
    return found


EXPECTED_OPTIONS = {
    "anthropic": {"max_tokens": 8192},
    "openai": {"max_tokens": 4096, "temperature": 0.7},
    "deepseek": {"max_tokens": 4096, "temperature": 0.7},
    "volcengine": {"max_tokens": 4096, "temperature": 0.7},
    "qwen": {"max_tokens": 4096, "temperature": 0.7},
    "moonshot": {"max_tokens": 4096, "temperature": 0.7},
    "openrouter": {"max_tokens": 4096, "temperature": 0.7},
    "ollama": {"options": {"num_predict": 4096, "temperature": 0.7}},
}


@pytest.mark.parametrize("provider", list(MODELS))
async def test_two_step_tool_turn_streams_text(client, workspace, fake_llm, provider) -> None:
    (workspace / "notes.txt").write_text("hello world\n")
    fake_llm.script(
        Reply(
            text="Let me read it.", tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]
        ),
        Reply(text="The notes say hello world.", usage=(40, 9)),
    )
    session_id = await open_session(client, workspace, fake_llm, provider)
    result, updates = await prompt(client, session_id, "What is in notes.txt?")

    assert result["terminal"] == "completed" and result["stopReason"] == "end_turn"
    assert kinds([{"update": u} for u in updates]) == [
        *["agent_message_chunk"] * 4,
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "step_finish",
        *["agent_message_chunk"] * 5,
        "step_finish",
        "turn_end",
    ]
    assert "".join(streamed(updates)) == "Let me read it.The notes say hello world."
    assert updates[6]["status"] == "completed" and "hello world" in updates[6]["output"]
    first, second = (r.body for r in fake_llm.requests)
    assert first["model"] == second["model"] == MODELS[provider]
    assert first.items() >= EXPECTED_OPTIONS[provider].items()
    if provider == "anthropic":
        assert "temperature" not in first
    assert len(tool_results(provider, second)) == 1
    assert "hello world" in str(tool_results(provider, second)[0])
    assert assistant_texts(provider, second) == ["Let me read it."]
    expected_key = f"key-{provider}" if provider in KEY_VARS else None
    assert {auth(r.headers) for r in fake_llm.requests} == {expected_key}


async def test_anthropic_caches_the_stored_history_not_the_turn_context(
    client, workspace, fake_llm
) -> None:
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("list_dir", {})]),
        Reply(text="Empty."),
    )
    session_id = await open_session(client, workspace, fake_llm, "anthropic")
    await prompt(client, session_id, "list it")
    body = fake_llm.requests[1].body

    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    last = body["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
    assert last[0]["cache_control"] == {"type": "ephemeral"}
    assert last[1]["text"].startswith("<turn-context>") and "cache_control" not in last[1]


VISION = {
    "anthropic": ("claude-haiku-4-5", {"visionModel": "claude-sonnet-4-6"}, "claude-sonnet-4-6"),
    "openai": ("o3-mini", {}, "gpt-5.5"),
    "deepseek": ("deepseek-chat", {"visionModel": "deepseek-vl2"}, "deepseek-vl2"),
    "ollama": ("llama3.2", {}, "llava"),
}


def images_sent(provider: str, body: dict) -> list:
    users = [m for m in messages(provider, body) if m["role"] == "user"]
    if wire(provider) == "ollama":
        return [i for m in users for i in m.get("images", [])]
    blocks = [b for m in users if isinstance(m["content"], list) for b in m["content"]]
    unmarked = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
    return [b for b in unmarked if b["type"] in ("image", "image_url")]


def first_user_text(provider: str, body: dict) -> str:
    content = messages(provider, body)[0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


IMAGE_SHAPES = {
    "anthropic": {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
    },
    "openai": {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
    "ollama": PNG_B64,
}


@pytest.mark.parametrize("provider", MAIN)
async def test_image_turn_switches_to_the_vision_model(
    client, workspace, fake_llm, provider
) -> None:
    model, llm, target = VISION[provider]
    (workspace / "shot.png").write_bytes(PNG)
    fake_llm.script(Reply(text="A tiny picture."), Reply(text="Still here."))
    session_id = await open_session(client, workspace, fake_llm, provider, model=model, **llm)
    result, updates = await prompt(client, session_id, "Describe shot.png please")
    again, _ = await prompt(client, session_id, "and now?")

    assert result["terminal"] == again["terminal"] == "completed"
    assert updates[0] == {"kind": "model_switched", "model": target, "reason": "vision"}
    first, second = (r.body for r in fake_llm.requests)
    assert (first["model"], second["model"]) == (target, model), "the image turn alone"
    shape = IMAGE_SHAPES[wire(provider)]
    assert images_sent(provider, first) == [shape]
    assert first_user_text(provider, first) == "Describe please"
    if images.can_see(model, provider, None):
        assert images_sent(provider, second) == [shape]
    else:
        assert images_sent(provider, second) == [], "a text-only model gets a note instead"
        assert f"seen by {target}" in json.dumps(second)


async def test_images_that_cannot_be_served_fail_only_their_turn(
    client, workspace, fake_llm
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    (workspace / "bitmap.png").write_bytes(b"BM" + bytes(40))
    fake_llm.script(Reply(text="Fine, text works."))
    session_id = await open_session(client, workspace, fake_llm, "deepseek")
    no_vision, _ = await prompt(client, session_id, "look at shot.png")
    bad_type, _ = await prompt(client, session_id, "look at bitmap.png")
    ok, updates = await prompt(client, session_id, "just text")

    assert no_vision["terminal"] == "failed"
    assert "deepseek-chat cannot read images" in no_vision["error"]
    assert "--vision-model" in no_vision["error"]
    assert bad_type["terminal"] == "failed" and "unsupported image type" in bad_type["error"]
    assert ok["terminal"] == "completed" and "".join(streamed(updates)) == "Fine, text works."
    assert len(fake_llm.requests) == 1
    sent = messages("deepseek", fake_llm.requests[0].body)
    assert sent[0]["content"] == "just text", "failed prompts left no trace"
    assert "image_url" not in str(sent)


async def test_anthropic_adaptive_thinking_from_the_prompt(client, workspace, fake_llm) -> None:
    fake_llm.script(
        Reply(thinking="Plan the listing", tool_calls=[FakeToolCall("list_dir", {})]),
        Reply(thinking="Nothing there", text="It is empty."),
    )
    session_id = await open_session(
        client, workspace, fake_llm, "anthropic", providerOptions={"temperature": 0.4}
    )
    result, updates = await prompt(client, session_id, "what is here?", think="hard")

    assert result["terminal"] == "completed", result
    assert "".join(streamed(updates, "agent_thought_chunk")) == "Plan the listingNothing there"
    first, second = (r.body for r in fake_llm.requests)
    assert first["thinking"] == {"type": "adaptive"}
    assert first["output_config"] == {"effort": "high"}
    assert "temperature" not in first and "budget_tokens" not in str(first)
    replayed = second["messages"][1]["content"][0]
    assert replayed["type"] == "thinking" and replayed["thinking"] == "Plan the listing"
    assert replayed["signature"].startswith("sig_")


async def test_anthropic_legacy_thinking_from_config(client, workspace, fake_llm) -> None:
    fake_llm.script(Reply(thinking="hm", text="ok"), Reply(text="plain"))
    session_id = await open_session(
        client,
        workspace,
        fake_llm,
        "anthropic",
        model="claude-sonnet-4-5",
        think="think",
        thinkingBudget=20000,
    )
    await prompt(client, session_id, "think about it")
    await prompt(client, session_id, "now quickly", think=False)
    first, second = (r.body for r in fake_llm.requests)

    assert first["thinking"] == {"type": "enabled", "budget_tokens": 20000}
    assert first["max_tokens"] == 20000 + 8192 and "output_config" not in first
    assert "thinking" not in second


@pytest.mark.parametrize(
    ("provider", "model", "expected", "absent"),
    [
        (
            "openai",
            "o3",
            {"reasoning_effort": "high", "max_completion_tokens": 32768},
            ["temperature", "max_tokens", "thinking"],
        ),
        ("deepseek", "deepseek-reasoner", {"max_tokens": 32768}, ["thinking", "reasoning_effort"]),
        ("ollama", "qwen3:8b", {"options": {"num_predict": 4096, "temperature": 0.7}}, ["think"]),
    ],
)
async def test_reasoning_models_stream_thoughts(
    client, workspace, fake_llm, provider, model, expected, absent
) -> None:
    fake_llm.script(
        Reply(thinking="Let me check", tool_calls=[FakeToolCall("list_dir", {})]),
        Reply(thinking="Empty dir", text="Nothing here."),
    )
    session_id = await open_session(client, workspace, fake_llm, provider, model=model)
    result, updates = await prompt(client, session_id, "what is here?", think="ultra")

    assert result["terminal"] == "completed", result
    assert "".join(streamed(updates, "agent_thought_chunk")) == "Let me checkEmpty dir"
    first = fake_llm.requests[0].body
    assert first.items() >= expected.items()
    assert not [key for key in absent if key in first]


@pytest.mark.parametrize("provider", MAIN)
async def test_rate_limit_then_success(client, workspace, fake_llm, provider) -> None:
    fake_llm.script(
        Reply(status=429, error_message="slow down", retry_after_ms=None, retry_after=0.05),
        Reply(text="Recovered fine."),
    )
    session_id = await open_session(client, workspace, fake_llm, provider)
    result, updates = await prompt(client, session_id, "hi")

    assert result["terminal"] == "completed", result
    retry = updates[0]
    assert (retry["kind"], retry["attempt"], retry["delay"]) == ("stream_retry", 1, 0.05)
    assert retry["error"] == f"{provider}: HTTP 429: slow down"
    assert "".join(streamed(updates)) == "Recovered fine."
    assert len(fake_llm.requests) == 2


@pytest.mark.parametrize("provider", MAIN)
async def test_cut_stream_is_retried_without_duplicating_text(
    client, workspace, fake_llm, provider
) -> None:
    fake_llm.script(
        Reply(text="The first attempt dies", cut_after=2),
        Reply(text="The full answer."),
        Reply(text="Sure."),
    )
    session_id = await open_session(client, workspace, fake_llm, provider)
    result, updates = await prompt(client, session_id, "hi")
    await prompt(client, session_id, "thanks")

    assert result["terminal"] == "completed", result
    assert kinds([{"update": u} for u in updates])[:4] == [
        "agent_message_chunk",
        "agent_message_chunk",
        "stream_retry",
        "agent_message_chunk",
    ]
    assert streamed(updates)[:2] == ["The ", "first "]
    assert "".join(streamed(updates)[2:]) == "The full answer."
    assert assistant_texts(provider, fake_llm.requests[-1].body) == ["The full answer."]


@pytest.mark.parametrize("provider", MAIN)
async def test_server_errors_exhaust_retries_then_the_session_recovers(
    client, workspace, fake_llm, provider
) -> None:
    fake_llm.script(
        *[Reply(status=500, error_message="the model fell over")] * 3,
        Reply(text="fine now"),
    )
    session_id = await open_session(client, workspace, fake_llm, provider)
    failed, failed_updates = await prompt(client, session_id, "hi")
    ok, ok_updates = await prompt(client, session_id, "again")

    assert failed["terminal"] == "failed" and failed["stopReason"] == "error"
    assert failed["error"] == (
        f"{provider}: HTTP 500: the model fell over (gave up after 3 attempts)"
    )
    retries = [u for u in failed_updates if u["kind"] == "stream_retry"]
    assert [r["attempt"] for r in retries] == [1, 2]
    assert failed_updates[-1]["kind"] == "turn_end"
    assert ok["terminal"] == "completed" and "".join(streamed(ok_updates)) == "fine now"
    assert len(fake_llm.requests) == 4

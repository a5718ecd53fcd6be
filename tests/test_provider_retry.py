"""Retries: backoff with jitter, retry-after, the attempt limit, restarts that discard partials."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from protocol.methods import NewSessionParams, PromptParams
from server.engines.native import NativeEngine
from server.providers.errors import retry_after
from server.providers.messages import (
    Finish,
    Message,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallPart,
    ToolCallReady,
    Usage,
)
from server.providers.retry import RetryPolicy, StreamRestart, stream_with_retries
from server.sessions.model import ClientCapabilities
from server.sessions.service import SessionService

REQUEST = ModelRequest(model="m", system="", messages=[Message("user", [TextPart("hi")])])


class FlakyProvider:
    """Each call plays the next script: a list of events, ending in an error or not."""

    name = "flaky"

    def __init__(self, *scripts: list[StreamEvent | ProviderError]):
        self.scripts = list(scripts)
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        for item in self.scripts.pop(0):
            if isinstance(item, ProviderError):
                raise item
            yield item


class Sleeps(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def busy(status: int = 503, **kw) -> ProviderError:
    return ProviderError(f"p: HTTP {status}: busy", status=status, retryable=True, **kw)


DONE = Finish("end_turn", Usage(1, 1))


async def run(provider, policy, sleeps) -> list:
    return [e async for e in stream_with_retries(provider, REQUEST, policy, sleep=sleeps)]


def test_backoff_grows_with_jitter_and_a_cap() -> None:
    policy = RetryPolicy(max_retries=10, base=0.5, cap=4.0, rng=random.Random(7))
    delays = [policy.delay(n, busy()) for n in range(1, 7)]

    for n, delay in enumerate(delays, start=1):
        backoff = min(4.0, 0.5 * 2 ** (n - 1))
        assert backoff * 0.5 <= delay <= backoff
    assert len(set(delays)) == len(delays)


def test_retry_after_is_honoured_up_to_max_wait() -> None:
    policy = RetryPolicy(max_retries=3, max_wait=30)

    assert policy.delay(1, busy(429, retry_after=2.5)) == 2.5
    assert policy.delay(1, busy(429, retry_after=0)) == 0
    assert policy.delay(1, busy(429, retry_after=31)) is None


def test_no_retry_for_permanent_errors_or_past_the_limit() -> None:
    policy = RetryPolicy(max_retries=2)

    assert policy.delay(1, ProviderError("p: HTTP 400: bad", status=400)) is None
    assert policy.delay(3, busy()) is None
    assert RetryPolicy(max_retries=0).delay(1, busy()) is None


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "1.5", "retry-after-ms": "20"}, 0.02),
        ({"retry-after": "soon"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_headers(headers, seconds) -> None:
    assert retry_after(headers) == seconds


def test_retry_after_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    seconds = retry_after({"retry-after": format_datetime(when, usegmt=True)})

    assert seconds is not None and 25 < seconds <= 30


async def test_restart_then_success() -> None:
    provider = FlakyProvider(
        [TextDelta("par"), busy(retry_after=0.01)],
        [TextDelta("full answer"), DONE],
    )
    sleeps = Sleeps()
    events = await run(provider, RetryPolicy(max_retries=2), sleeps)

    assert events == [
        TextDelta("par"),
        StreamRestart(attempt=1, delay=0.01, error="p: HTTP 503: busy"),
        TextDelta("full answer"),
        DONE,
    ]
    assert sleeps == [0.01]


async def test_gives_up_after_the_limit_with_the_provider_message() -> None:
    provider = FlakyProvider([busy(500)], [busy(500)], [busy(500)], [DONE])
    sleeps = Sleeps()
    seen: list = []
    with pytest.raises(ProviderError) as info:
        async for event in stream_with_retries(
            provider, REQUEST, RetryPolicy(max_retries=2, rng=random.Random(1)), sleep=sleeps
        ):
            seen.append(event)

    assert str(info.value) == "p: HTTP 500: busy (gave up after 3 attempts)"
    assert info.value.status == 500
    assert [e.attempt for e in seen] == [1, 2]
    assert provider.calls == 3 and len(sleeps) == 2


async def test_permanent_error_is_raised_unchanged() -> None:
    error = ProviderError("p: HTTP 401: no (check KEY)", status=401)
    provider = FlakyProvider([error])
    with pytest.raises(ProviderError) as info:
        await run(provider, RetryPolicy(max_retries=5), Sleeps())

    assert info.value is error and provider.calls == 1


# -- through the agent loop ------------------------------------------------------------------------


class Recorder:
    capabilities = ClientCapabilities()

    def __init__(self) -> None:
        self.updates: list[dict] = []

    def send_update(self, params) -> None:
        self.updates.append(params.to_wire()["update"])


async def test_loop_discards_what_a_failed_attempt_streamed(tmp_path) -> None:
    provider = FlakyProvider(
        [
            TextDelta("I will "),
            ToolCallReady(ToolCallPart("call_x", "list_dir", {})),
            busy(retry_after=0),
        ],
        [TextDelta("Nothing to do."), DONE],
        [TextDelta("ok"), DONE],
    )
    channel = Recorder()
    engine = NativeEngine(provider_factory=lambda s: provider, tools=lambda: [])
    service = SessionService({"native": engine}, channel, flags={"llm": {"provider": "scripted"}})
    session = await service.new_session(NewSessionParams(cwd=str(tmp_path)))
    ask = {"sessionId": session.session_id, "prompt": [{"type": "text", "text": "go"}]}
    result = await service.prompt(PromptParams.model_validate(ask))

    assert result.terminal == "completed"
    assert channel.updates[:5] == [
        {"kind": "agent_message_chunk", "text": "I will "},
        {
            "kind": "tool_call",
            "toolCallId": "call_x",
            "name": "list_dir",
            "title": "list_dir",
            "toolKind": "other",
            "input": {},
        },
        {
            "kind": "tool_call_update",
            "toolCallId": "call_x",
            "status": "failed",
            "error": "The model call was interrupted and is being retried; this call was not run.",
        },
        {"kind": "stream_retry", "attempt": 1, "delay": 0, "error": "p: HTTP 503: busy"},
        {"kind": "agent_message_chunk", "text": "Nothing to do."},
    ]
    history = service.sessions[session.session_id].handle.history
    assert history == [
        Message("user", [TextPart("go")]),
        Message("assistant", [TextPart("Nothing to do.")]),
    ]


async def test_the_final_error_carries_the_usage_of_every_attempt() -> None:
    """What each failed attempt reported is billed; the error that ends the call says it all."""
    provider = FlakyProvider(
        [busy(500, retry_after=0.01)], [busy(500, retry_after=0.01)], [busy(500)]
    )
    for script, used in zip(
        provider.scripts, (Usage(100, 1), Usage(90, 2), Usage(80, 3)), strict=True
    ):
        script[0].usage = used
    with pytest.raises(ProviderError) as info:
        await run(provider, RetryPolicy(max_retries=2), Sleeps())
    assert info.value.usage == Usage(270, 6)

    alone = busy(400)
    alone.retryable = False
    alone.usage = Usage(100, 1)
    with pytest.raises(ProviderError) as info:
        await run(FlakyProvider([alone]), RetryPolicy(max_retries=2), Sleeps())
    assert info.value.usage == Usage(100, 1)

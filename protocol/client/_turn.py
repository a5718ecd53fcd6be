"""One prompt's stream: typed updates, then the `PromptResult` that ends it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from protocol.methods import PromptResult
from protocol.updates import (
    UPDATE_ADAPTER,
    AgentMessageChunk,
    SessionUpdateKind,
    StepFinish,
    StreamRetry,
)


class UnknownUpdate(BaseModel):
    """An update this client cannot type: a kind added by a newer server, or a known kind whose
    fields changed. Passed through as received so callers can log or ignore it."""

    kind: str
    data: dict[str, Any]
    """The update object exactly as it arrived."""


Update = SessionUpdateKind | UnknownUpdate


def parse_update(raw: Any) -> Update:
    try:
        return UPDATE_ADAPTER.validate_python(raw)
    except ValidationError:
        data = raw if isinstance(raw, dict) else {"value": raw}
        return UnknownUpdate(kind=str(data.get("kind", "")), data=data)


def answer_text(updates: Iterable[Update]) -> str:
    """The agent's text over the turn. Chunks a `stream_retry` discards (everything since the
    previous `step_finish`) are left out, as the retry streams them again."""
    kept: list[str] = []
    pending: list[str] = []
    for update in updates:
        if isinstance(update, AgentMessageChunk):
            pending.append(update.text)
        elif isinstance(update, StepFinish):
            kept += pending
            pending = []
        elif isinstance(update, StreamRetry):
            pending = []
    return "".join(kept + pending)


class Turn:
    """A running prompt. Iterate it (`async for`) for its updates as typed models; the last item
    is the `PromptResult`. A failed request (unknown session, busy, ...) raises its `RpcError`
    from the iteration. `await turn.wait()` skips to the result."""

    def __init__(self, response: asyncio.Future[Any], *, on_done: Callable[[Turn], None]):
        self.turn_id: str | None = None
        self.last_seq: int | None = None
        self.updates: list[Update] = []
        """Every update delivered so far, in order."""
        self.result: PromptResult | None = None
        self._queue: asyncio.Queue[Update | PromptResult | BaseException] = asyncio.Queue()
        self._finished = False
        self._error: BaseException | None = None
        self._on_done = on_done
        response.add_done_callback(self._respond)

    @property
    def text(self) -> str:
        return answer_text(self.updates)

    def accepts(self, turn_id: str) -> bool:
        return self.turn_id is None or self.turn_id == turn_id

    def deliver(self, turn_id: str, seq: int, update: Update) -> None:
        self.turn_id = turn_id
        self.last_seq = seq
        self.updates.append(update)
        self._queue.put_nowait(update)

    def _respond(self, response: asyncio.Future[Any]) -> None:
        item: PromptResult | BaseException
        if response.cancelled():
            item = asyncio.CancelledError()
        elif (exc := response.exception()) is not None:
            item = exc
        else:
            try:
                item = PromptResult.model_validate(response.result())
                self.turn_id = item.turn_id
            except ValidationError as invalid:
                item = invalid
        self._on_done(self)
        self._queue.put_nowait(item)

    def __aiter__(self) -> Turn:
        return self

    async def __anext__(self) -> Update | PromptResult:
        if self._finished:
            raise StopAsyncIteration
        item = await self._queue.get()
        if isinstance(item, BaseException):
            self._finished = True
            self._error = item
            raise item
        if isinstance(item, PromptResult):
            self._finished = True
            self.result = item
        return item

    async def wait(self) -> PromptResult:
        """Consume the remaining updates and return the result."""
        async for _ in self:
            pass
        if self._error is not None:
            raise self._error
        assert self.result is not None
        return self.result

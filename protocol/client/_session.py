"""A session on the server, as the client sees it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from protocol.base import WireModel
from protocol.client._connection import Connection
from protocol.client._handlers import PermissionHandler, QuestionHandler
from protocol.client._turn import Turn, Update
from protocol.content import TextContent
from protocol.methods import (
    PromptOptions,
    RewindParams,
    RewindResult,
    SessionInfoResult,
    SteerResult,
)


class SessionOwner(Protocol):
    """The client a session belongs to, as the session uses it."""

    connection: Connection
    sessions: dict[str, Session]

    async def call(
        self, method: str, params: WireModel | Mapping[str, Any] | None = None
    ) -> Any: ...


Prompt = str | Sequence[WireModel | dict[str, Any]]


def prompt_blocks(prompt: Prompt) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [TextContent(text=prompt).to_wire()]
    return [b.to_wire() if isinstance(b, WireModel) else dict(b) for b in prompt]


class Session:
    """One agent session: `prompt()` runs a turn, `cancel()` stops it.

    `info` is the `session/new` (or `session/load`) result. `history` holds the updates the
    server replayed for `session/load`. `on_permission` / `on_question`, when set, answer this
    session's requests instead of the client's handlers.
    """

    def __init__(
        self,
        client: SessionOwner,
        session_id: str,
        *,
        on_permission: PermissionHandler | None = None,
        on_question: QuestionHandler | None = None,
    ):
        self.client = client
        self.id = session_id
        self.info: SessionInfoResult | None = None
        self.history: list[Update] = []
        self.on_permission = on_permission
        self.on_question = on_question
        self.loading = False
        self._turn: Turn | None = None
        self._last_turn_id: str | None = None

    def prompt(self, prompt: Prompt, *, options: PromptOptions | None = None) -> Turn:
        """Send `session/prompt` now and return the turn to iterate. `prompt` is text or a list
        of content blocks (models or wire dicts)."""
        params: dict[str, Any] = {"sessionId": self.id, "prompt": prompt_blocks(prompt)}
        if options is not None:
            params["options"] = options.to_wire()
        response = self.client.connection.send_request("session/prompt", params)
        turn = Turn(response, on_done=self._turn_done)
        # A prompt sent while a turn runs is refused as busy: it must not steal the stream.
        if self._turn is None:
            self._turn = turn
        return turn

    async def run(self, prompt: Prompt, *, options: PromptOptions | None = None) -> Turn:
        """Run a turn to its end and return it (`turn.result`, `turn.text`, `turn.updates`)."""
        turn = self.prompt(prompt, options=options)
        await turn.wait()
        return turn

    async def cancel(self) -> None:
        """Ask the running turn to stop; its stream then ends with terminal `aborted`."""
        await self.client.connection.notify("session/cancel", {"sessionId": self.id})

    async def steer(self, prompt: Prompt) -> SteerResult:
        """Add a user message to the running turn, before its next model call."""
        params = {"sessionId": self.id, "prompt": prompt_blocks(prompt)}
        return await self.client.call("session/steer", params)

    async def rewind(
        self, turn_id: str, *, files: bool = True, conversation: bool = False, dry_run: bool = False
    ) -> RewindResult:
        """Undo `turn_id` and every later turn (`session/rewind`): its files and, with
        `conversation`, a new branch session (`result.session_id`) before it. Raises
        `RewindRefused` when a file changed outside agentls since."""
        params = RewindParams(
            session_id=self.id,
            turn_id=turn_id,
            files=files,
            conversation=conversation,
            dry_run=dry_run,
        )
        raw = await self.client.call("session/rewind", params.to_wire())
        return RewindResult.model_validate(raw)

    async def set_model(self, model_id: str) -> None:
        await self.client.call("session/set_model", {"sessionId": self.id, "modelId": model_id})

    async def set_mode(self, mode_id: str) -> None:
        await self.client.call("session/set_mode", {"sessionId": self.id, "modeId": mode_id})

    async def close(self) -> None:
        await self.client.call("session/close", {"sessionId": self.id})
        self.client.sessions.pop(self.id, None)

    def deliver(self, turn_id: str, seq: int, update: Update) -> None:
        """Route one `session/update`. Updates of no current turn are a `session/load` replay
        (kept in `history`) or stragglers of a finished turn (dropped)."""
        if turn_id == self._last_turn_id:
            return
        if self._turn is not None:
            if self._turn.accepts(turn_id):
                self._turn.deliver(turn_id, seq, update)
        elif self.loading:
            self.history.append(update)

    def _turn_done(self, turn: Turn) -> None:
        if self._turn is turn:
            self._turn = None
            self._last_turn_id = turn.turn_id

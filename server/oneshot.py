"""`agentls -p PROMPT`: one turn in the current directory, the answer on stdout."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    NewSessionParams,
    PromptParams,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionUpdateParams,
)
from server.sessions.service import ClientCapabilities, ServiceError


class PrintChannel:
    """Nobody to ask: permission prompts and questions are unreachable; text goes to stdout."""

    capabilities = ClientCapabilities()

    def __init__(self) -> None:
        self.text: list[str] = []

    def send_update(self, params: SessionUpdateParams) -> None:
        update = params.update
        if update.kind == "agent_message_chunk":
            self.text.append(update.text)
        elif update.kind == "tool_call":
            print(f"[{update.title}]", file=sys.stderr)

    async def request_permission(self, params: RequestPermissionParams) -> RequestPermissionResult:
        raise AssertionError("unreachable: the channel advertises no permissions")

    async def ask_question(self, params: AskQuestionParams) -> AskQuestionResult:
        raise AssertionError("unreachable: the channel advertises no questions")


def run_oneshot(prompt: str, *, cwd: str | None, factory) -> int:
    from server.logs import setup_logging

    setup_logging("oneshot")
    channel = PrintChannel()
    service = factory(channel)

    async def go() -> int:
        workspace = Path(cwd or ".").resolve()
        try:
            session = await service.new_session(NewSessionParams(cwd=str(workspace)))
            result = await service.prompt(
                PromptParams.model_validate(
                    {"sessionId": session.session_id, "prompt": [{"type": "text", "text": prompt}]}
                )
            )
        except ServiceError as exc:
            print(f"agentls: {exc}", file=sys.stderr)
            return 1
        finally:
            await service.close_all()
        print("".join(channel.text))
        if result.terminal != "completed":
            print(
                f"agentls: turn {result.terminal}: {result.error or result.stop_reason}",
                file=sys.stderr,
            )
            return 1
        return 0

    return anyio.run(go)

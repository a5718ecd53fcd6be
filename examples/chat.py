"""Chat with the agent in a terminal.

    .venv/bin/python examples/chat.py --cwd path/to/repo

Type a message and press Enter; `/quit` or end of input leaves, Ctrl-C cancels the running turn.
Text streams as it comes; tool calls, their outcomes and the plan are shown as they happen;
permission requests and questions are asked at the prompt. Input may be piped, one line per
message or answer: piped lines are echoed so the transcript reads like a session.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import threading

from protocol.client import (
    AgentlsError,
    AgentMessageChunk,
    AgentThoughtChunk,
    AskQuestionParams,
    AskQuestionResult,
    Client,
    Compaction,
    ModeChanged,
    ModelSwitched,
    Plan,
    PromptResult,
    RequestPermissionParams,
    RequestPermissionResult,
    Session,
    StreamRetry,
    SubagentUpdate,
    ToolCall,
    ToolCallUpdate,
    Update,
    reject,
    selected,
)

PLAN_MARKS = {"pending": " ", "in_progress": "~", "completed": "x", "cancelled": "-"}


class Console:
    """Lines from stdin (read on a thread so the event loop keeps streaming) and output."""

    def __init__(self) -> None:
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.echo = not sys.stdin.isatty()
        self.titles: dict[str, str] = {}
        self.at_line_start = True
        self.thinking = False
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, args=(loop,), daemon=True).start()

    def _pump(self, loop: asyncio.AbstractEventLoop) -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(self.lines.put_nowait, line.rstrip("\r\n"))
        loop.call_soon_threadsafe(self.lines.put_nowait, None)

    def write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()
        if text:
            self.at_line_start = text.endswith("\n")

    def say(self, text: str) -> None:
        """A line of its own, whatever was streaming before."""
        self.write(("" if self.at_line_start else "\n") + text + "\n")

    async def read(self, prompt: str) -> str | None:
        self.write(("" if self.at_line_start else "\n") + prompt)
        line = await self.lines.get()
        if self.echo or line is None:
            self.write((line or "") + "\n")
        self.at_line_start = True  # a terminal echoes what the user typed, Enter included
        return line

    # -- what the agent sends ------------------------------------------------------------------

    def render(self, update: Update | PromptResult) -> None:
        thinking = isinstance(update, AgentThoughtChunk)
        if thinking and not self.thinking:
            self.write(("" if self.at_line_start else "\n") + "thinking: ")
        elif self.thinking and not thinking:
            self.write("\n")
        self.thinking = thinking
        match update:
            case AgentMessageChunk(text=text) | AgentThoughtChunk(text=text):
                self.write(text)
            case ToolCall(tool_call_id=call_id, title=title):
                self.titles[call_id] = title
                self.say(f"[tool] {title}")
            case ToolCallUpdate(status="in_progress"):
                pass
            case ToolCallUpdate(tool_call_id=call_id, status=status, error=error):
                title = self.titles.get(call_id, call_id)
                self.say(f"[{status}] {title}" + (f": {error}" if error else ""))
            case Plan(entries=entries):
                self.say("[plan]")
                for entry in entries:
                    self.say(f"  [{PLAN_MARKS.get(entry.status, '?')}] {entry.content}")
            case StreamRetry(delay=delay, error=error):
                self.say(f"[retrying in {delay:g} s: {error}; the reply starts over]")
            case SubagentUpdate(profile=profile, status=status, summary=summary):
                self.say(f"[subagent {profile}: {status}]" + (f" {summary}" if summary else ""))
            case ModelSwitched(model=model, reason=reason):
                self.say(f"[model {model}: {reason}]")
            case ModeChanged(mode=mode, reason=reason):
                self.say(f"[mode {mode}: {reason}]")
            case Compaction(before=before, after=after):
                self.say(f"[history compacted: {before} -> {after} tokens]")
            case PromptResult(terminal=terminal, error=error):
                self.say(f"[{terminal}]" + (f" {error}" if error else ""))
            case _:
                pass  # step_finish, turn_end, mirrors of our own answers, kinds added later

    async def permission(self, request: RequestPermissionParams) -> RequestPermissionResult:
        call = request.tool_call
        self.say(
            f"[permission] {call.title} ({call.name})" + (f": {call.reason}" if call.reason else "")
        )
        options = request.options
        self.say("  " + "  ".join(f"{i}) {o.name}" for i, o in enumerate(options, 1)))
        answer = await self.read(f"choice [1-{len(options)}, empty rejects]: ")
        if answer and answer.strip().isdigit() and 1 <= int(answer) <= len(options):
            return selected(options[int(answer) - 1].option_id)
        return reject(request)

    async def question(self, request: AskQuestionParams) -> AskQuestionResult:
        answers: dict[str, str | list[str]] = {}
        for question in request.questions:
            self.say(f"[question] {question.question}")
            for i, option in enumerate(question.options, 1):
                self.say(
                    f"  {i}) {option.label}"
                    + (f": {option.description}" if option.description else "")
                )
            hint = "numbers separated by commas" if question.multi_select else "a number"
            answer = await self.read(f"answer ({hint}, or your own words; empty declines): ")
            if not answer or not answer.strip():
                return AskQuestionResult(declined=True)
            labels = [pick_label(question.options, part) for part in answer.split(",")]
            answers[question.question] = labels if question.multi_select else ", ".join(labels)
        return AskQuestionResult(answers=answers)


def pick_label(options: list, text: str) -> str:
    text = text.strip()
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1].label
    return text


@contextlib.contextmanager
def ctrl_c_cancels(session: Session):
    """While a turn runs, Ctrl-C cancels it instead of ending the program (where supported)."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, lambda: loop.create_task(session.cancel()))
    except (NotImplementedError, RuntimeError):  # Windows: Ctrl-C ends the program
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def chat(args: argparse.Namespace) -> int:
    console = Console()
    async with await Client.spawn(
        on_permission=console.permission, on_question=console.question
    ) as client:
        try:
            session = await client.new_session(
                args.cwd, provider=args.provider, model=args.model, mode=args.mode
            )
        except AgentlsError as exc:
            print(f"chat: {exc}", file=sys.stderr)
            return 2
        info = session.info
        assert info is not None
        console.say(f"agentls: {info.model} in {args.cwd}, mode {info.modes.current_mode_id}")
        while (line := await console.read("you> ")) is not None:
            if line.strip() in ("/quit", "/exit"):
                break
            if not line.strip():
                continue
            with ctrl_c_cancels(session):
                async for update in session.prompt(line):
                    console.render(update)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="Chat with the agent in a terminal.")
    parser.add_argument("--cwd", default=".", help="the workspace (default: here)")
    parser.add_argument("--provider", help="model provider, e.g. anthropic, openai, scripted")
    parser.add_argument("--model", help="model id")
    parser.add_argument("--mode", choices=["default", "plan", "acceptEdits", "bypassPermissions"])
    try:
        return asyncio.run(chat(parser.parse_args()))
    except KeyboardInterrupt:  # Ctrl-C while no turn runs
        return 130


if __name__ == "__main__":
    sys.exit(main())

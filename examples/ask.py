"""Ask one question about a repository and print the answer.

    .venv/bin/python examples/ask.py --cwd path/to/repo "What does this project do?"

The session runs in `plan` mode, so the agent can read and search but not change anything.
Tool activity goes to stderr, the answer to stdout. Exit status: 0 when the turn completed,
1 when it ended otherwise, 2 when the server refused the session (e.g. no API key).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from protocol.client import AgentlsError, Client, ToolCall, ToolCallUpdate


async def ask(question: str, *, cwd: str, provider: str | None, model: str | None) -> int:
    async with await Client.spawn() as client:
        try:
            session = await client.new_session(cwd, provider=provider, model=model, mode="plan")
        except AgentlsError as exc:
            print(f"ask: {exc}", file=sys.stderr)
            return 2
        titles: dict[str, str] = {}
        turn = session.prompt(question)
        async for update in turn:
            if isinstance(update, ToolCall):
                titles[update.tool_call_id] = update.title
                print(f"[tool] {update.title}", file=sys.stderr)
            elif isinstance(update, ToolCallUpdate) and update.status in ("failed", "denied"):
                title = titles.get(update.tool_call_id, update.tool_call_id)
                print(f"[{update.status}] {title}: {update.error}", file=sys.stderr)
    result = turn.result
    assert result is not None
    if result.terminal != "completed":
        print(f"ask: the turn ended {result.terminal}: {result.error or ''}", file=sys.stderr)
        return 1
    print(turn.text)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="Ask the agent one question about a repository.")
    parser.add_argument("question")
    parser.add_argument("--cwd", default=".", help="the repository (default: here)")
    parser.add_argument("--provider", help="model provider, e.g. anthropic, openai, scripted")
    parser.add_argument("--model", help="model id")
    args = parser.parse_args()
    return asyncio.run(ask(args.question, cwd=args.cwd, provider=args.provider, model=args.model))


if __name__ == "__main__":
    sys.exit(main())

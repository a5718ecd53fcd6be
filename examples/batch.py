"""Run the same prompt over several directories in parallel sessions; print the results as JSON.

    .venv/bin/python examples/batch.py --prompt "Summarize this project." repo1 repo2 repo3

One server, one session per directory, at most `--jobs` turns at a time. The output is a JSON
list in the order of the directories, one object per directory:
`{cwd, sessionId, turnId, terminal, stopReason, answer, toolCalls, usage, error}`, or
`{cwd, error}` when no session could be opened there. Sessions run in `plan` mode (read-only).
Exit status: 0 when every turn completed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from protocol.client import AgentlsError, Client, ToolCall


async def run_one(client: Client, cwd: Path, prompt: str, limit: asyncio.Semaphore) -> dict:
    async with limit:
        try:
            session = await client.new_session(cwd, mode="plan")
            turn = await session.run(prompt)
            await session.close()
        except AgentlsError as exc:
            return {"cwd": str(cwd), "error": str(exc)}
    result = turn.result
    assert result is not None
    return {
        "cwd": str(cwd),
        "sessionId": session.id,
        "turnId": result.turn_id,
        "terminal": result.terminal,
        "stopReason": result.stop_reason,
        "answer": turn.text,
        "toolCalls": [u.name for u in turn.updates if isinstance(u, ToolCall)],
        "usage": result.usage.to_wire(),
        "error": result.error,
    }


async def batch(prompt: str, dirs: list[Path], *, jobs: int) -> list[dict[str, Any]]:
    limit = asyncio.Semaphore(jobs)
    async with await Client.spawn() as client:
        runs = [run_one(client, d.resolve(), prompt, limit) for d in dirs]
        return list(await asyncio.gather(*runs))


def main() -> int:
    parser = argparse.ArgumentParser(description="One prompt, many directories, JSON results.")
    parser.add_argument("dirs", nargs="+", type=Path, help="directories to run the prompt in")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--jobs", type=int, default=4, help="turns running at once (default 4)")
    parser.add_argument("--output", type=Path, help="write the JSON here instead of stdout")
    args = parser.parse_args()
    results = asyncio.run(batch(args.prompt, args.dirs, jobs=max(1, args.jobs)))
    text = json.dumps(results, indent=2, ensure_ascii=False)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0 if all(r.get("terminal") == "completed" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

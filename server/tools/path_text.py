"""A path as a tool's input: text no file name can hold (a NUL byte) is refused when the call's
input is read, so that call fails with the reason and the turn goes on."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise ValueError("the path holds a NUL byte (\\0), which no file name can hold")
    return value


PathText = Annotated[str, AfterValidator(_no_nul)]

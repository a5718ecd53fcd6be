"""Secrets out of what agentls writes: turn errors, logs, traces and the store.

Three kinds are masked: credentials in a URL (`http://user:TOKEN@host` -> `http://***@host`),
the value of an `Authorization` / `x-api-key` header, and the value of any environment variable
whose name says it holds a key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ..., *_TOKEN, *_SECRET).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

MASK = "***"
URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"'<>]+@")
HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key)"
    r"([\"']?\s*[:=]\s*[\"']?)((?:bearer|basic|token)\s+)?[^\s\"',;}]+"
)
SECRET_NAME = re.compile(r"(?i)(_API_KEY|_AUTH_TOKEN|_ACCESS_TOKEN|_TOKEN|_SECRET|_SECRET_KEY)$")
MIN_SECRET = 8


def secret_names(environ: Mapping[str, str] | None = None) -> list[str]:
    environ = os.environ if environ is None else environ
    return [k for k in environ if SECRET_NAME.search(k)]


_held: Counter[str] = Counter()
"""Secret values of environments other than this process's (a listening server's
connections), masked everywhere while they are held."""


_held_version = 0
_cache: tuple[dict[Any, Any] | None, int, list[str]] = (None, -1, [])
"""(the environment read, `_held_version` then, the values to mask) for `_values`; replaced
whole, so a thread never sees one part without the others."""


def hold(environ: Mapping[str, str]) -> list[str]:
    """Mask `environ`'s secret values too, until `release(returned)`."""
    values = [environ[k] for k in secret_names(environ) if len(environ[k]) >= MIN_SECRET]
    _held.update(values)
    _forget()
    return values


def release(values: list[str]) -> None:
    _held.subtract(values)
    for value in [v for v, n in _held.items() if n <= 0]:
        del _held[value]
    _forget()


def _forget() -> None:
    global _held_version
    _held_version += 1


def _values() -> list[str]:
    """Every store write and log line asks; reading the environment's names (decoding each)
    took half of the process's time while a reply streamed, so the answer is kept until the
    environment changes (compared as the raw mapping `os.environ` keeps, one C-level `==`)."""
    global _cache
    raw = getattr(os.environ, "_data", None)
    seen, version, found = _cache
    if raw is not None and version == _held_version and raw == seen:
        return found
    version = _held_version
    values = {os.environ[k] for k in secret_names() if len(os.environ[k]) >= MIN_SECRET}
    found = sorted(values | set(_held), key=len, reverse=True)
    if raw is not None:
        _cache = (dict(raw), version, found)
    return found


def redact(text: str) -> str:
    return _masked(text, _values()) if text else text


def redact_data(value: Any) -> Any:
    """`value` (JSON-shaped: dicts, lists, strings, numbers) with every string redacted; keys
    are kept. Returned as it is when its JSON text holds nothing to mask."""
    values = _values()
    if _clean(value, values):
        return value

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _masked(item, values) if item else item
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(v) for v in item]
        return item

    return walk(value)


def _clean(value: Any, values: list[str]) -> bool:
    """Whether no string in `value` can need masking, judged on its JSON text in one pass of
    C code (walking a model request string by string cost ~2 ms a step). JSON's escapes only
    widen what the checks below find, except inside a secret value that JSON would escape;
    with one of those the answer is no."""
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return False
    if "@" in text and "://" in text:
        return False
    lowered = text.lower()
    if "authoriz" in lowered or "api-key" in lowered:
        return False
    return not any(v in text or json.dumps(v, ensure_ascii=False)[1:-1] != v for v in values)


def _masked(text: str, values: list[str]) -> str:
    # The patterns cost ~40 µs on a short line even when nothing matches, and every stored
    # event passes here: run each only where the text holds what it needs to match.
    if "@" in text:
        text = URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
    lowered = text.lower()
    if "authoriz" in lowered or "api-key" in lowered:
        text = HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{MASK}", text)
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text

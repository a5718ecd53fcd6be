"""Session ids are names, never paths: `sess_` and hex digits (agentls's own), or a UUID (what
Claude Code's `--session-id` takes). Every door checks a client's id with `check_session_id`
before it becomes a session, and the stores refuse any other."""

from __future__ import annotations

import re

SESSION_ID = re.compile(
    r"sess_[0-9a-f]{1,64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def valid_session_id(text: object) -> bool:
    return isinstance(text, str) and SESSION_ID.fullmatch(text) is not None


def check_session_id(text: str) -> str:
    """`text` when it is a session id; ValueError saying what one is otherwise."""
    if not valid_session_id(text):
        raise ValueError(invalid_session_id(text))
    return text


def invalid_session_id(text: str) -> str:
    return f"not a session id: {text!r} (a session id is `sess_` and hex digits, or a UUID)"

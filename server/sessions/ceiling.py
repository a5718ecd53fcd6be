"""The highest permission mode a resident server's owner lets a connection's sessions use
(`server.frontends.principals` puts it in the connection's environment). Every door's mode
change goes through the session service, which checks it here."""

from __future__ import annotations

from collections.abc import Mapping

MODE_CEILING = "AGENTLS_MODE_CEILING"
MODE_RANK = {"plan": 0, "default": 1, "acceptEdits": 2, "bypassPermissions": 3}


def above_ceiling(mode: str, environ: Mapping[str, str] | None) -> str | None:
    """Why `mode` may not be used under `environ`'s ceiling, or None."""
    ceiling = (environ or {}).get(MODE_CEILING)
    if not ceiling or MODE_RANK.get(mode, 3) <= MODE_RANK.get(ceiling, 3):
        return None
    return f"the server's owner runs sessions in permission mode {ceiling}: not {mode}"

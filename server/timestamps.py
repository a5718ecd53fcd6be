"""Timestamps as the wire and the stored files show them."""

from __future__ import annotations

import time


def iso(ts: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC with milliseconds."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts))
    return f"{stamp}.{int(ts * 1000) % 1000:03d}Z"

"""The provider contract: one model call in, a stream of normalized events out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

from server.providers.messages import ModelRequest, StreamEvent


@dataclass(frozen=True)
class ProviderSettings:
    """Everything needed to build a provider client. `api_key` is never logged."""

    provider: str
    model: str
    api_key: str | None = None
    base_url: str | None = None
    max_retries: int = 2
    """Retries of a failed model call (`server.providers.retry`); SDKs never retry themselves."""
    timeout: float = 600.0


class Provider(Protocol):
    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one model call. Raises `ProviderError` on failure."""
        ...


ProviderFactory = Callable[[ProviderSettings], Provider]
"""Makes the provider a session's settings name (the seam tests and tracing use)."""

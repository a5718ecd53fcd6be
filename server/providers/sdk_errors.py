"""One translation of the official SDKs' exceptions into `ProviderError`s, for the Anthropic and
OpenAI providers (both SDKs share one exception tree):

    <base error>                  -> "name: ..." (e.g. an unreadable credentials profile)
    └── APIError                  -> an error inside the stream (`errors.stream_error`)
        ├── APIStatusError        -> an HTTP error answer (`errors.status_error`); one with a
        │                            status below 400 is an `event: error` inside a 200 stream
        └── APIConnectionError    -> cannot reach the server (retryable)
            └── APITimeoutError   -> timed out (retryable)

plus the transport's own errors mid-stream, which mean the stream was cut (retryable). The SDK
comes in as a module, so importing this one stays cheap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from server.providers.errors import (
    connection_error,
    cut_error,
    status_error,
    stream_error,
    timeout_error,
)
from server.providers.messages import ProviderError


@asynccontextmanager
async def translated(
    sdk: Any,
    base_error: type[BaseException],
    *,
    name: str,
    base_url: str,
    key_env: str,
    transport_errors: tuple[type[BaseException], ...] = (),
) -> AsyncIterator[None]:
    """Raise the `ProviderError` for whatever `sdk` raises inside the block."""
    try:
        yield
    except sdk.APIStatusError as exc:
        if exc.status_code < 400:
            raise stream_error(name, exc.body, exc.message) from exc
        raise status_error(
            name, exc.status_code, exc.body, key_env=key_env, headers=exc.response.headers
        ) from exc
    except sdk.APITimeoutError as exc:
        raise timeout_error(name, base_url) from exc
    except sdk.APIConnectionError as exc:
        raise connection_error(name, base_url, exc) from exc
    except transport_errors as exc:
        raise cut_error(name, exc) from exc
    except sdk.APIError as exc:
        raise stream_error(name, exc.body, exc.message) from exc
    except base_error as exc:
        raise ProviderError(f"{name}: {exc}") from exc

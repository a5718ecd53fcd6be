"""Building `ProviderError`s from what the SDKs report, shared by the SDK-backed providers.

Each provider catches its SDK's exceptions in one place (for the Anthropic and OpenAI SDKs,
`sdk_errors.translated`) and calls these helpers; nothing here imports an SDK.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from email.utils import parsedate_to_datetime
from typing import Any

from server.providers.messages import ProviderError
from server.redact import redact

# Error types (inside a 200 stream) that a later attempt may not hit.
RETRYABLE_ERROR_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "server_error"}
)


def is_retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def server_message(body: object) -> str | None:
    """The human message in an error body: `{"error": {"message"}}`, `{"message"}` or text,
    followed by the upstream reason an OpenRouter error carries in `metadata.raw`."""
    message = _own_message(body)
    upstream = _upstream(body)
    if message and upstream and upstream not in message:
        return f"{message} ({upstream})"
    return message or upstream


def _upstream(body: object) -> str | None:
    """`metadata: {raw, provider_name}`; raw is the upstream's own error body, often JSON."""
    inner: Any = body.get("error", body) if isinstance(body, Mapping) else None
    metadata = inner.get("metadata") if isinstance(inner, Mapping) else None
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("raw"), str):
        return None
    raw: Any = metadata["raw"]
    try:
        raw = _own_message(json.loads(raw)) or raw
    except ValueError:
        pass
    name = metadata.get("provider_name")
    return f"{name}: {raw}" if isinstance(name, str) and name else str(raw)


def _own_message(body: object) -> str | None:
    if isinstance(body, Mapping):
        inner: Any = body.get("error")
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
        return None
    if isinstance(body, str) and body.strip():
        return body.strip()
    return None


def server_error_type(body: object) -> str | None:
    if isinstance(body, Mapping):
        inner: Any = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("type"), str):
            return inner["type"]
    return None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, else `retry-after` (seconds or an
    HTTP date). None when absent or unreadable."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def status_error(
    name: str,
    status: int,
    body: object,
    *,
    key_env: str,
    headers: Mapping[str, str] | None = None,
) -> ProviderError:
    """An HTTP error answer: 'openai: HTTP 500: boom'. A 401 names where the key comes from."""
    detail = server_message(body) or "no error message"
    message = f"{name}: HTTP {status}: {detail}"
    if status == 401:
        message += f" (check {key_env})"
    return ProviderError(
        message,
        status=status,
        retryable=is_retryable_status(status),
        retry_after=retry_after(headers),
    )


def stream_error(name: str, body: object, fallback: str) -> ProviderError:
    """An error reported inside an otherwise successful stream."""
    kind = server_error_type(body)
    detail = server_message(body) or fallback
    prefix = f"{name}: {kind}: " if kind else f"{name}: "
    return ProviderError(prefix + detail, retryable=kind in RETRYABLE_ERROR_TYPES)


def connection_error(name: str, base_url: str, exc: BaseException) -> ProviderError:
    cause = exc.__cause__ or exc
    detail = str(cause) or type(cause).__name__
    return ProviderError(redact(f"{name}: cannot reach {base_url}: {detail}"), retryable=True)


def cut_error(name: str, exc: BaseException | None = None) -> ProviderError:
    """The stream stopped before the model finished (connection dropped mid-way)."""
    detail = f": {exc}" if exc is not None and str(exc) else ""
    return ProviderError(
        f"{name}: the stream was cut before the reply finished{detail}", retryable=True
    )


def timeout_error(name: str, base_url: str) -> ProviderError:
    return ProviderError(redact(f"{name}: timed out waiting for {base_url}"), retryable=True)


def missing_key_error(name: str, key_env: str) -> ProviderError:
    return ProviderError(f"{name}: no API key: set {key_env} or configure an API key")


@asynccontextmanager
async def billed_on_failure(
    translated: AbstractAsyncContextManager[None], reader: Any
) -> AsyncIterator[None]:
    """A provider's SDK error translation, with the usage `reader` has seen so far attached to
    the `ProviderError`: a failed call is billed for what it reported."""
    try:
        async with translated:
            yield
    except ProviderError as exc:
        exc.usage = reader.usage
        raise

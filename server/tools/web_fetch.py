"""web_fetch: read one web page or API response over http(s), behind the SSRF guard.

Redirects are followed here (at most 3), not by httpx, so each hop goes through
`ssrf.PinnedTransport` and is checked again. The body is streamed with a running byte cap and
the whole fetch, redirects and a slowly trickling body included, runs under one deadline.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from server.config import WEB_FETCH_MAX_TIMEOUT, duration, positive

from .base import Tool, ToolContext, ToolError, ToolInput
from .web_search import WebSearch

if TYPE_CHECKING:
    import httpx

    from .ssrf import Resolver

MAX_REDIRECTS = 3
DEFAULT_MAX_BYTES = 2_000_000
DEFAULT_TIMEOUT = 15.0
MAX_TIMEOUT = WEB_FETCH_MAX_TIMEOUT
CACHE_SIZE = 32
CACHE_TTL = 300.0
REDIRECT_CODES = (301, 302, 303, 307, 308)
USER_AGENT = "Mozilla/5.0 (compatible; agentls web_fetch)"
ACCEPT = {
    "markdown": "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5",
    "text": "text/plain, text/html;q=0.9, */*;q=0.5",
    "html": "text/html, application/xhtml+xml;q=0.9, */*;q=0.5",
    "json": "application/json, */*;q=0.5",
}
HEAD_HEADERS = ("content-type", "content-length", "last-modified", "etag", "location")
Format = Literal["markdown", "text", "html", "json"]


@dataclass(frozen=True)
class FetchSettings:
    """The `webFetch` config section."""

    max_bytes: int = DEFAULT_MAX_BYTES
    timeout: float = DEFAULT_TIMEOUT
    allowed_domains: tuple[str, ...] = ("*",)
    allow_private_hosts: bool = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FetchSettings:
        section = config.get("webFetch") or {}
        domains = section.get("allowedDomains", ["*"])
        if isinstance(domains, str):
            domains = [domains]
        return cls(
            max_bytes=positive(section.get("maxBytes"), DEFAULT_MAX_BYTES),
            timeout=config_timeout(section.get("timeout")),
            allowed_domains=tuple(str(d) for d in domains),
            allow_private_hosts=section.get("allowPrivateHosts") is True,
        )


def config_timeout(value: Any) -> float:
    """`webFetch.timeout` as seconds (`server.config.duration`)."""
    return duration(value, key="webFetch.timeout", default=DEFAULT_TIMEOUT, ceiling=MAX_TIMEOUT)




@dataclass
class Page:
    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    truncated: bool = False

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


@dataclass
class _Cache:
    """A few recent results, so re-reading a page in the same session costs no request."""

    size: int = CACHE_SIZE
    ttl: float = CACHE_TTL
    entries: OrderedDict[tuple, tuple[float, dict[str, Any]]] = field(default_factory=OrderedDict)

    def get(self, key: tuple) -> dict[str, Any] | None:
        hit = self.entries.get(key)
        if hit is None or time.monotonic() - hit[0] > self.ttl:
            self.entries.pop(key, None)
            return None
        self.entries.move_to_end(key)
        return dict(hit[1])

    def put(self, key: tuple, result: dict[str, Any]) -> None:
        self.entries[key] = (time.monotonic(), dict(result))
        self.entries.move_to_end(key)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


class WebFetchInput(ToolInput):
    url: str = Field(description="Absolute http:// or https:// URL.")
    format: Format = Field(
        default="markdown",
        description="markdown (HTML converted, main content only), text, html (raw) or json.",
    )
    method: Literal["GET", "HEAD"] = Field(
        default="GET", description="HEAD returns status and headers only."
    )
    maxBytes: int | None = Field(
        default=None,
        ge=1,
        description="Read at most this many body bytes (default and ceiling: webFetch.maxBytes, "
        "2,000,000).",
    )
    timeout: float | None = Field(
        default=None, gt=0, le=MAX_TIMEOUT, description="Seconds for the whole fetch (default 15)."
    )


class WebFetch(Tool):
    """Fetches one URL and returns it as Markdown, text, HTML or JSON."""

    name = "web_fetch"
    description = (
        "Fetch a public web page or API response (http/https, GET or HEAD) and return "
        "{url (after redirects), statusCode, contentType, format, bytes, content}. "
        "format=markdown (default) turns HTML into Markdown of the page's main content, without "
        "scripts, styles, navigation or footers; text gives plain text, html the raw document, "
        "json the parsed and pretty-printed JSON. Error statuses (404, 500) are returned, not "
        "raised: check statusCode. Bodies longer than maxBytes are cut (truncated: true), and "
        "content past 50,000 characters is cut too: prefer the most specific page. "
        "Internal and private addresses (localhost, 10.x, 192.168.x, cloud metadata) are "
        "refused, and only the domains the user allows can be fetched. Use web_search first "
        "when you do not know the URL."
    )
    Input = WebFetchInput
    read_only = True
    kind = "fetch"
    risk = "medium"

    def __init__(
        self,
        *,
        resolver: Resolver | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`resolver` and `transport` replace DNS and the network connection (tests)."""
        self._resolver = resolver
        self._transport = transport
        self._cache = _Cache()

    def title(self, args: WebFetchInput) -> str:
        verb = "Fetch" if args.method == "GET" else "HEAD"
        return f"{verb} {args.url}"

    async def run(self, ctx: ToolContext, args: WebFetchInput) -> dict[str, Any]:
        from anyio import to_thread

        settings = FetchSettings.from_config(ctx.config)
        cap = min(args.maxBytes or settings.max_bytes, settings.max_bytes)
        key = (args.method, args.url, args.format, cap, settings)
        cacheable = not _has_credentials(args.url)
        cached = self._cache.get(key) if cacheable else None
        if cached is not None:
            return cached
        page = await self._fetch(args, settings, cap, args.timeout or settings.timeout)
        # Parsing a large page takes a while: keep the event loop free for other turns.
        result = await to_thread.run_sync(build_result, page, args.format, args.method)
        if cacheable and page.status < 400:
            self._cache.put(key, result)
        return result

    async def _fetch(
        self, args: WebFetchInput, settings: FetchSettings, cap: int, timeout: float
    ) -> Page:
        import anyio
        import httpx

        from .ssrf import Guard, PinnedTransport, parse_url

        start = parse_url(args.url)
        guard = Guard(
            allowed_domains=settings.allowed_domains,
            allow_private_hosts=settings.allow_private_hosts,
            resolver=self._resolver,
        )
        client = httpx.AsyncClient(
            transport=PinnedTransport(guard, self._transport),
            trust_env=False,
            follow_redirects=False,
            timeout=timeout,
            headers={"user-agent": USER_AGENT, "accept": ACCEPT[args.format]},
        )
        try:
            async with client:
                with anyio.fail_after(timeout):
                    return await _follow(client, args.method, start, cap)
        except (TimeoutError, httpx.TimeoutException):
            raise ToolError(
                f"Timed out after {timeout:g} s fetching {args.url}; the site is slow or not "
                f"answering: retry later or pass a larger timeout (at most {MAX_TIMEOUT:g} s)"
            ) from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Could not fetch {args.url}: {type(exc).__name__}: {exc}") from None


def _has_credentials(url: str) -> bool:
    import httpx

    try:
        return bool(httpx.URL(url).userinfo)
    except httpx.InvalidURL:
        return True


async def _follow(client: httpx.AsyncClient, method: str, url: httpx.URL, cap: int) -> Page:
    from .ssrf import parse_url

    for hop in range(MAX_REDIRECTS + 1):
        async with client.stream(method, url) as response:
            location = response.headers.get("location")
            if response.status_code not in REDIRECT_CODES or not location:
                body, truncated = (
                    await _read_capped(response, cap) if method == "GET" else (b"", False)
                )
                return Page(str(url), response.status_code, response.headers, body, truncated)
            if hop == MAX_REDIRECTS:
                raise ToolError(
                    f"Too many redirects: more than {MAX_REDIRECTS}, the last from {url} to "
                    f"{location}; fetch the final URL directly if you know it"
                )
            url = parse_url(url.join(location))
    raise AssertionError("unreachable")


async def _read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        room = cap - len(body)
        if len(chunk) > room:
            body += chunk[:room]
            return bytes(body), True
        body += chunk
    return bytes(body), False


def build_result(page: Page, fmt: Format, method: str = "GET") -> dict[str, Any]:
    """The tool result for a fetched page in the requested format."""
    result: dict[str, Any] = {
        "url": page.url,
        "statusCode": page.status,
        "contentType": page.content_type,
        "format": fmt,
        "bytes": len(page.body),
        "content": _head_summary(page) if method == "HEAD" else page_content(page, fmt),
    }
    if page.truncated:
        result["truncated"] = True
    return result


def page_content(page: Page, fmt: Format) -> str:
    from . import web_html

    ctype, body = page.content_type, page.body
    if fmt == "json":
        return _json_content(page)
    if web_html.is_binary(ctype, body):
        raise ToolError(
            f"{page.url} is binary ({ctype or 'unknown type'}, HTTP {page.status}); web_fetch "
            "returns text only"
        )
    text = web_html.decode_body(body, ctype)
    if fmt == "html" or not web_html.is_html(ctype, body):
        content = text
    elif fmt == "markdown":
        content = web_html.html_to_markdown(text, page.url)
    else:
        content = web_html.html_to_text(text, page.url)
    if page.truncated:
        content += f"\n\n[truncated: only the first {len(body):,} bytes were read]"
    return content


def _json_content(page: Page) -> str:
    from .web_html import decode_body

    text = decode_body(page.body, page.content_type)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = " (the body was cut at maxBytes)" if page.truncated else ""
        raise ToolError(
            f"{page.url} answered HTTP {page.status} ({page.content_type or 'no content type'}) "
            f"with a body that is not JSON{cut}: {exc}. Body: {text[:500]}"
        ) from None
    return json.dumps(data, indent=2, ensure_ascii=False)


def _head_summary(page: Page) -> str:
    lines = [f"HTTP {page.status}"]
    for name in HEAD_HEADERS:
        if name in page.headers:
            lines.append(f"{name}: {page.headers[name]}")
    return "\n".join(lines)


def web_tools(config: Mapping[str, Any] | None = None) -> list[Tool]:
    """The web tools the config enables: web_fetch unless `webFetch.enabled` is false,
    web_search unless `webSearch.enabled` is false."""
    config = config or {}
    tools: list[Tool] = []
    if (config.get("webFetch") or {}).get("enabled", True) is not False:
        tools.append(WebFetch())
    if (config.get("webSearch") or {}).get("enabled", True) is not False:
        tools.append(WebSearch())
    return tools

"""Search providers for web_search: one request builder and response reader per API.

Each provider takes a `Query` and returns raw `Hit`s; cleaning, filtering and de-duplication
happen in `web_search`. Every endpoint is `base + path`, and the base is overridable so tests
and self-hosted deployments can point a provider elsewhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from .base import ToolError

if TYPE_CHECKING:
    import httpx

VOID_TAGS = {"br", "img", "wbr", "hr", "input", "meta", "link", "source"}
BROWSER_UA = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0 Safari/537.36"
)


@dataclass
class Hit:
    title: str
    url: str
    snippet: str


@dataclass
class Query:
    """One search as a provider sees it."""

    client: httpx.AsyncClient
    provider: Provider
    base: str
    text: str
    count: int
    key: str | None = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)

    def url(self) -> str:
        return self.base.rstrip("/") + self.provider.path

    def site_text(self) -> str:
        """The query text, limited to the one allowed domain when there is exactly one."""
        return f"{self.text} site:{self.include[0]}" if len(self.include) == 1 else self.text


@dataclass(frozen=True)
class Provider:
    name: str
    label: str
    base: str
    path: str
    search: Callable[[Query], Awaitable[list[Hit]]]
    key_env: tuple[str, ...] = ()
    """Environment variables holding the API key, in order; empty for keyless providers."""


async def _send(query: Query, method: str, **kwargs: Any) -> httpx.Response:
    import httpx

    try:
        response = await query.client.request(method, query.url(), **kwargs)
    except httpx.TimeoutException:
        raise ToolError(
            f"{query.provider.label} did not answer in time; retry, or pick another provider"
        ) from None
    except httpx.HTTPError as exc:
        raise ToolError(f"Could not reach {query.provider.label}: {exc}") from None
    if response.status_code >= 400:
        raise ToolError(_status_message(query, response))
    return response


def _status_message(query: Query, response: httpx.Response) -> str:
    label, status = query.provider.label, response.status_code
    if status in (401, 403) and query.provider.key_env:
        return (
            f"{label} rejected the API key (HTTP {status}); check "
            f"{query.provider.key_env[0]} or webSearch.{query.provider.name}.apiKey"
        )
    if status == 429:
        return f"{label} rate-limited the search (HTTP 429); wait, or pick another provider"
    body = response.text[:300]
    if query.key:
        body = body.replace(query.key, "***")
    return f"{label} search failed with HTTP {status}: {body}"


async def _json(query: Query, method: str, **kwargs: Any) -> Any:
    response = await _send(query, method, **kwargs)
    try:
        return response.json()
    except ValueError:
        raise ToolError(
            f"{query.provider.label} answered with something other than JSON "
            f"({response.headers.get('content-type', 'no content type')}); retry later"
        ) from None


def _bearer(query: Query) -> dict[str, str]:
    return {"authorization": f"Bearer {query.key}"}


def _items(data: Any, *path: str) -> list[dict[str, Any]]:
    for step in path:
        data = data.get(step) if isinstance(data, dict) else None
    return [item for item in data or [] if isinstance(item, dict)]


async def tavily(query: Query) -> list[Hit]:
    body: dict[str, Any] = {"query": query.text, "max_results": query.count}
    if query.include:
        body["include_domains"] = query.include
    if query.exclude:
        body["exclude_domains"] = query.exclude
    data = await _json(query, "POST", json=body, headers=_bearer(query))
    return [_hit(r, "title", "url", "content") for r in _items(data, "results")]


async def brave(query: Query) -> list[Hit]:
    params = {"q": query.site_text(), "count": query.count}
    headers = {"x-subscription-token": query.key or "", "accept": "application/json"}
    data = await _json(query, "GET", params=params, headers=headers)
    return [_hit(r, "title", "url", "description") for r in _items(data, "web", "results")]


async def bocha(query: Query) -> list[Hit]:
    body: dict[str, Any] = {"query": query.text, "count": query.count, "summary": True}
    if query.include:
        body["include"] = "|".join(query.include)
    if query.exclude:
        body["exclude"] = "|".join(query.exclude)
    data = await _json(query, "POST", json=body, headers=_bearer(query))
    if isinstance(data, dict) and data.get("code") not in (None, 200):
        raise ToolError(f"Bocha search failed: {data.get('msg') or data.get('code')}")
    pages = _items(data, "data", "webPages", "value")
    return [_hit(p, "name", "url", "summary" if p.get("summary") else "snippet") for p in pages]


async def qianfan(query: Query) -> list[Hit]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": query.text}],
        "search_source": "baidu_search_v2",
        "resource_type_filter": [{"type": "web", "top_k": query.count}],
    }
    if query.include:
        body["search_filter"] = {"match": {"site": query.include}}
    data = await _json(query, "POST", json=body, headers=_bearer(query))
    if isinstance(data, dict) and data.get("code") and not data.get("references"):
        raise ToolError(f"Qianfan search failed: {data.get('message') or data.get('code')}")
    return [_hit(r, "title", "url", "content") for r in _items(data, "references")]


async def searxng(query: Query) -> list[Hit]:
    params = {"q": query.site_text(), "format": "json", "pageno": 1}
    data = await _json(query, "GET", params=params)
    return [_hit(r, "title", "url", "content") for r in _items(data, "results")]


async def baidu(query: Query) -> list[Hit]:
    params = {"wd": query.site_text(), "rn": query.count, "pn": 0, "tn": "json", "ie": "utf-8"}
    data = await _json(query, "GET", params=params, headers={"user-agent": BROWSER_UA})
    return [_hit(e, "title", "url", "abs") for e in _items(data, "feed", "entry")]


async def duckduckgo(query: Query) -> list[Hit]:
    response = await _send(
        query, "POST", data={"q": query.site_text(), "b": ""}, headers={"user-agent": BROWSER_UA}
    )
    page = response.text
    if response.status_code == 202 or "anomaly-modal" in page or "challenge-form" in page:
        raise ToolError(
            "DuckDuckGo answered with a bot check instead of results; retry later, or set up a "
            "keyed provider (TAVILY_API_KEY, BRAVE_API_KEY, BOCHA_API_KEY, QIANFAN_API_KEY) or "
            "a SearXNG instance (webSearch.searxng.baseUrl)"
        )
    parser = _DuckDuckGoParser()
    parser.feed(page)
    parser.close()
    return parser.hits


def _hit(item: dict[str, Any], title: str, url: str, snippet: str) -> Hit:
    return Hit(str(item.get(title) or ""), str(item.get(url) or ""), str(item.get(snippet) or ""))


class _DuckDuckGoParser(HTMLParser):
    """Reads results from DuckDuckGo's HTML endpoint: a `result__a` link per result, then a
    `result__snippet` element. Ads link through `/y.js` and are skipped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hits: list[Hit] = []
        self._field: str | None = None
        self._depth = 0
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._field:
            self._depth += tag not in VOID_TAGS
            if tag == "br":
                self._text.append(" ")
            return
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            url = _ddg_target(values.get("href") or "")
            if url:
                self.hits.append(Hit("", url, ""))
                self._start("title")
        elif "result__snippet" in classes and self.hits and not self.hits[-1].snippet:
            self._start("snippet")

    def handle_endtag(self, tag: str) -> None:
        if not self._field or tag in VOID_TAGS:
            return
        if self._depth:
            self._depth -= 1
            return
        setattr(self.hits[-1], self._field, "".join(self._text))
        self._field = None

    def handle_data(self, data: str) -> None:
        if self._field:
            self._text.append(data)

    def _start(self, name: str) -> None:
        self._field, self._depth, self._text = name, 0, []


def _ddg_target(href: str) -> str | None:
    """The result's own URL: DuckDuckGo wraps it in `/l/?uddg=<url>`; ads go through `/y.js`."""
    parts = urlsplit(href if "//" in href else "https://duckduckgo.com" + href)
    if parts.path.endswith("/y.js"):
        return None
    if parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg", [""])[0]
        return target or None
    return href if href.startswith(("http://", "https://")) else None


PROVIDERS = {
    p.name: p
    for p in (
        Provider(
            "tavily", "Tavily", "https://api.tavily.com", "/search", tavily, ("TAVILY_API_KEY",)
        ),
        Provider(
            "brave",
            "Brave Search",
            "https://api.search.brave.com",
            "/res/v1/web/search",
            brave,
            ("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY"),
        ),
        Provider(
            "bocha", "Bocha", "https://api.bochaai.com", "/v1/web-search", bocha, ("BOCHA_API_KEY",)
        ),
        Provider(
            "qianfan",
            "Baidu Qianfan",
            "https://qianfan.baidubce.com",
            "/v2/ai_search/web_search",
            qianfan,
            ("QIANFAN_API_KEY", "BAIDU_QIANFAN_API_KEY"),
        ),
        Provider("duckduckgo", "DuckDuckGo", "https://html.duckduckgo.com", "/html/", duckduckgo),
        Provider("searxng", "SearXNG", "", "/search", searxng),
        Provider("baidu", "Baidu", "https://www.baidu.com", "/s", baidu),
    )
}
KEYED_ORDER = ("tavily", "brave", "bocha", "qianfan")

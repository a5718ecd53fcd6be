"""web_search: search the web through a pluggable provider (see `web_search_providers`).

`auto` picks the first keyed provider that has a key (tavily > brave > bocha > qianfan), else
keyless DuckDuckGo; `webSearch.provider` in the config replaces `auto`. Keys come from the
environment or `webSearch.<provider>.apiKey`; endpoints from `AGENTLS_<PROVIDER>_BASE_URL`,
`webSearch.<provider>.baseUrl` or the provider's public API. Provider endpoints are
configuration, not model input, so they do not go through the SSRF guard.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field

from .base import Tool, ToolContext, ToolError, ToolInput

if TYPE_CHECKING:
    import httpx

    from .web_search_providers import Hit, Provider

DEFAULT_RESULTS = 8
MAX_RESULTS = 20
DEFAULT_TIMEOUT = 15.0
TITLE_CAP = 200
SNIPPET_CAP = 400
ProviderName = Literal[
    "auto", "tavily", "brave", "bocha", "qianfan", "duckduckgo", "searxng", "baidu"
]
_TAGS = re.compile(r"<[^>]*>")


class WebSearchInput(ToolInput):
    query: str = Field(min_length=1, description="What to search for, as you would type it.")
    provider: ProviderName = Field(
        default="auto", description="Search engine; auto picks the configured one."
    )
    maxResults: int | None = Field(
        default=None, ge=1, le=MAX_RESULTS, description="Number of results (default 8, max 20)."
    )
    allowedDomains: list[str] | None = Field(
        default=None, description="Only results from these domains (and their subdomains)."
    )
    blockedDomains: list[str] | None = Field(
        default=None, description="Never results from these domains (and their subdomains)."
    )


class WebSearch(Tool):
    """Searches the web and returns titles, URLs and snippets."""

    name = "web_search"
    description = (
        "Search the web. Returns {query, provider, count, results: [{title, url, snippet}]}, "
        "at most maxResults (default 8, max 20), duplicates removed. Use it for current "
        "information, documentation and error messages you do not know; then read the best "
        'results with web_fetch. allowedDomains / blockedDomains (e.g. ["docs.python.org"]) '
        "keep or drop results by domain, subdomains included. Snippets are short: do not "
        "quote them as the page's full content."
    )
    Input = WebSearchInput
    read_only = True
    kind = "fetch"
    risk = "medium"

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`environ` replaces os.environ for keys and endpoints; `transport` the network."""
        self._environ = environ
        self._transport = transport

    def title(self, args: WebSearchInput) -> str:
        return f'Search the web for "{args.query}"'

    async def run(self, ctx: ToolContext, args: WebSearchInput) -> dict[str, Any]:
        from .web_search_providers import PROVIDERS, Query

        if not args.query.strip():
            raise ToolError("The query is empty; say what to search for")
        section = ctx.config.get("webSearch") or {}
        env = os.environ if self._environ is None else self._environ
        provider = PROVIDERS[choose_provider(args.provider, section, env)]
        count = _result_count(args.maxResults, section)
        allowed = [
            d for d in (_domains(section.get("allowedDomains")), _domains(args.allowedDomains)) if d
        ]
        blocked = _domains(section.get("blockedDomains")) + _domains(args.blockedDomains)
        base, key = base_url(provider, section, env), api_key(provider, section, env)
        async with self._client(section) as client:
            query = Query(
                client=client,
                provider=provider,
                base=base,
                text=args.query.strip(),
                # Ask for more when filtering here may drop some.
                count=min(MAX_RESULTS, count * 2) if allowed or blocked else count,
                key=key,
                include=allowed[-1] if allowed else [],
                exclude=blocked,
            )
            hits = await provider.search(query)
        results = tidy_results(hits, allowed=allowed, blocked=blocked)[:count]
        return {
            "query": args.query,
            "provider": provider.name,
            "count": len(results),
            "results": results,
        }

    def _client(self, section: Mapping[str, Any]) -> httpx.AsyncClient:
        import httpx

        timeout = section.get("timeout")
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
            timeout = DEFAULT_TIMEOUT
        return httpx.AsyncClient(transport=self._transport, timeout=timeout, follow_redirects=True)


def choose_provider(requested: str, section: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The provider to use: the requested one, else the configured one, else the first keyed
    provider with a key, else DuckDuckGo."""
    from .web_search_providers import KEYED_ORDER, PROVIDERS

    name = requested if requested != "auto" else str(section.get("provider") or "auto")
    if name != "auto":
        if name not in PROVIDERS:
            raise ToolError(f"Unknown search provider {name!r}; use one of {', '.join(PROVIDERS)}")
        return name
    for candidate in KEYED_ORDER:
        if _key_of(PROVIDERS[candidate], section, env):
            return candidate
    return "duckduckgo"


def api_key(provider: Provider, section: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The provider's key; raises ToolError naming where to put it when a keyed one has none."""
    if not provider.key_env:
        return None
    key = _key_of(provider, section, env)
    if not key:
        raise ToolError(
            f"{provider.label} needs an API key: set {provider.key_env[0]} in the environment or "
            f"webSearch.{provider.name}.apiKey in the user config, or search with provider "
            "'duckduckgo', which needs none"
        )
    return key


def _key_of(provider: Provider, section: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    for var in provider.key_env:
        if env.get(var, "").strip():
            return env[var].strip()
    value = _provider_section(provider, section).get("apiKey")
    return value.strip() if isinstance(value, str) and value.strip() else None


def base_url(provider: Provider, section: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Where the provider is reached: the environment override, the config, else its public API."""
    base = env.get(f"AGENTLS_{provider.name.upper()}_BASE_URL") or _provider_section(
        provider, section
    ).get("baseUrl")
    base = base if isinstance(base, str) and base.strip() else provider.base
    if not base:
        raise ToolError(
            f"{provider.label} needs the address of an instance: set webSearch.{provider.name}"
            f".baseUrl (e.g. http://localhost:8888) or AGENTLS_{provider.name.upper()}_BASE_URL"
        )
    return base.strip()


def _provider_section(provider: Provider, section: Mapping[str, Any]) -> Mapping[str, Any]:
    value = section.get(provider.name)
    return value if isinstance(value, Mapping) else {}


def _result_count(requested: int | None, section: Mapping[str, Any]) -> int:
    if requested:
        return requested
    configured = section.get("maxResults")
    if isinstance(configured, int) and not isinstance(configured, bool) and configured > 0:
        return min(configured, MAX_RESULTS)
    return DEFAULT_RESULTS


def _domains(entries: Any) -> list[str]:
    """Domain filter entries as bare lower-case host names (`https://x.com/a` → `x.com`)."""
    if isinstance(entries, str):
        entries = [entries]
    out = []
    for entry in entries or []:
        entry = str(entry).strip().lower()
        if "//" in entry:
            entry = urlsplit(entry).hostname or ""
        entry = entry.split("/", 1)[0].rstrip(".")
        if entry:
            out.append(entry)
    return out


def domain_matches(host: str, entries: list[str]) -> bool:
    """`x.com` matches x.com and its subdomains, `*.x.com` its subdomains only."""
    for entry in entries:
        if entry.startswith("*."):
            if host.endswith(entry[1:]):
                return True
        elif host == entry or host.endswith("." + entry):
            return True
    return False


def tidy_results(
    hits: list[Hit], *, allowed: list[list[str]], blocked: list[str]
) -> list[dict[str, str]]:
    """Clean titles and snippets, drop non-web and filtered URLs, remove duplicates."""
    seen: set[tuple[str, str, str]] = set()
    results = []
    for hit in hits:
        parts = urlsplit(hit.url.strip())
        host = (parts.hostname or "").rstrip(".")
        if parts.scheme not in ("http", "https") or not host:
            continue
        if domain_matches(host, blocked) or not all(domain_matches(host, a) for a in allowed):
            continue
        key = (host.removeprefix("www."), parts.path.rstrip("/"), parts.query)
        if key in seen:
            continue
        seen.add(key)
        results.append(
            {
                "title": clean_text(hit.title, TITLE_CAP) or host,
                "url": hit.url.strip(),
                "snippet": clean_text(hit.snippet, SNIPPET_CAP),
            }
        )
    return results


def clean_text(text: str, cap: int) -> str:
    """Plain text from a provider's snippet: no tags, entities decoded, one line, capped."""
    text = " ".join(html.unescape(_TAGS.sub("", text)).split())
    return text if len(text) <= cap else text[: cap - 1].rstrip() + "…"

"""web_search: each provider's request and response shape against a loopback fake of its API."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from server.permissions import PermissionState, decide
from server.tools.base import ToolContext, ToolError
from server.tools.web_search import WebSearch, choose_provider

DDG_PAGE = """<!DOCTYPE html>
<html><head><title>rust async at DuckDuckGo</title></head>
<body>
<div class="serp__results"><div id="links" class="results">
  <div class="result results_links results_links_deep result--ad ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a"
        href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=bing&amp;u3=x">Buy Rust Now</a></h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=ads.example">Sponsored</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a"
          href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust-lang.github.io%2Fasync-book%2F&amp;rut=abc123">Asynchronous
          Programming in <b>Rust</b></a>
      </h2>
      <div class="result__extras"><div class="result__extras__url">
        <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust-lang.github.io%2Fasync-book%2F">rust-lang.github.io/async-book</a>
      </div></div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust-lang.github.io%2Fasync-book%2F">Getting
        Started. Welcome to <b>Asynchronous</b> Programming in <b>Rust</b>!<br>This book &amp; more.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a"
        href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2Ftokio%2Ftutorial%3Fx%3D1&amp;rut=def">Tutorial | <b>Tokio</b></a></h2>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2Ftokio%2Ftutorial%3Fx%3D1">Tokio is an <b>asynchronous</b> runtime.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a"
        href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.github.io%2Fasync-book&amp;rut=dup">Async book (mirror)</a></h2>
      <a class="result__snippet" href="#">Same page again.</a>
    </div>
  </div>
</div></div>
</body></html>
"""

DDG_ANOMALY = """<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
<form id="challenge-form" action="/anomaly.js"></form></body></html>"""


class QuietServer(ThreadingHTTPServer):
    """Clients that hang up early (size cap, timeouts) are expected, not errors to print."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address) -> None:
        pass


class FakeAPI:
    """A loopback server answering each path with a scripted (status, content type, body)."""

    def __init__(self) -> None:
        self.replies: dict[str, tuple[int, str, bytes]] = {}
        self.requests: list[dict] = []
        self.delay = 0.0

    def reply(
        self, path: str, body, *, status: int = 200, content_type: str = "application/json"
    ) -> None:
        data = body if isinstance(body, str) else json.dumps(body)
        self.replies[path] = (status, content_type, data.encode())

    def __enter__(self) -> "FakeAPI":
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                parts = urlsplit(self.path)
                api.requests.append(
                    {
                        "method": self.command,
                        "path": parts.path,
                        "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                time.sleep(api.delay)
                status, ctype, data = api.replies.get(parts.path, (404, "text/plain", b"no route"))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    self.close_connection = True

            do_POST = do_GET

            def log_message(self, *args) -> None:
                pass

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def last(self) -> dict:
        return self.requests[-1]

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.last()["body"]).items()}

    def json(self) -> dict:
        return json.loads(self.last()["body"])


@pytest.fixture
def api():
    with FakeAPI() as fake:
        yield fake


ALL = ("tavily", "brave", "bocha", "qianfan", "duckduckgo", "searxng", "baidu")


def ctx_for(tmp_path: Path, api: FakeAPI, **web_search) -> ToolContext:
    section = {name: {"baseUrl": api.url} for name in ALL}
    return ToolContext(cwd=tmp_path, config={"webSearch": {**section, **web_search}})


async def search(ctx: ToolContext, query: str, environ: dict | None = None, **kw) -> dict:
    tool = WebSearch(environ=environ or {})
    return await tool.run(ctx, WebSearch.Input(query=query, **kw))


# Providers


async def test_tavily(tmp_path, api):
    api.reply(
        "/search",
        {
            "query": "python asyncio",
            "results": [
                {
                    "title": "asyncio — Asynchronous I/O",
                    "url": "https://docs.python.org/3/library/asyncio.html",
                    "content": "asyncio is a library to write concurrent code using async/await.",
                    "score": 0.98,
                    "raw_content": None,
                }
            ],
            "response_time": 1.2,
        },
    )
    result = await search(
        ctx_for(tmp_path, api), "python asyncio", {"TAVILY_API_KEY": "tvly-test"}, provider="tavily"
    )
    assert result == {
        "query": "python asyncio",
        "provider": "tavily",
        "count": 1,
        "results": [
            {
                "title": "asyncio — Asynchronous I/O",
                "url": "https://docs.python.org/3/library/asyncio.html",
                "snippet": "asyncio is a library to write concurrent code using async/await.",
            }
        ],
    }
    sent = api.last()
    assert (sent["method"], sent["path"]) == ("POST", "/search")
    assert sent["headers"]["authorization"] == "Bearer tvly-test"
    assert api.json() == {"query": "python asyncio", "max_results": 8}


async def test_brave(tmp_path, api):
    api.reply(
        "/res/v1/web/search",
        {
            "type": "search",
            "query": {"original": "rust book"},
            "web": {
                "type": "search",
                "results": [
                    {
                        "title": "The <strong>Rust</strong> Programming Language",
                        "url": "https://doc.rust-lang.org/book/",
                        "description": "by Steve Klabnik &amp; Carol Nichols. <strong>Rust</strong> book.",
                        "language": "en",
                    }
                ],
            },
        },
    )
    result = await search(
        ctx_for(tmp_path, api),
        "rust book",
        {"BRAVE_API_KEY": "brv"},
        provider="brave",
        maxResults=5,
    )
    assert result["results"] == [
        {
            "title": "The Rust Programming Language",
            "url": "https://doc.rust-lang.org/book/",
            "snippet": "by Steve Klabnik & Carol Nichols. Rust book.",
        }
    ]
    sent = api.last()
    assert (sent["method"], sent["path"], sent["query"]) == (
        "GET",
        "/res/v1/web/search",
        {"q": "rust book", "count": "5"},
    )
    assert sent["headers"]["x-subscription-token"] == "brv"
    assert sent["headers"]["accept"] == "application/json"


async def test_bocha_prefers_the_summary(tmp_path, api):
    api.reply(
        "/v1/web-search",
        {
            "code": 200,
            "log_id": "abc",
            "msg": None,
            "data": {
                "_type": "SearchResponse",
                "queryContext": {"originalQuery": "天气"},
                "webPages": {
                    "webSearchUrl": "",
                    "totalEstimatedMatches": 2,
                    "value": [
                        {
                            "id": "1",
                            "name": "北京天气",
                            "url": "https://weather.example.cn/bj",
                            "snippet": "短",
                            "summary": "北京今天晴 最高气温 25 度。",
                        },
                        {
                            "id": "2",
                            "name": "上海天气",
                            "url": "https://weather.example.cn/sh",
                            "snippet": "上海多云",
                            "summary": "",
                        },
                    ],
                },
            },
        },
    )
    result = await search(
        ctx_for(tmp_path, api), "天气", {"BOCHA_API_KEY": "sk-b"}, provider="bocha", maxResults=2
    )
    assert result["results"] == [
        {
            "title": "北京天气",
            "url": "https://weather.example.cn/bj",
            "snippet": "北京今天晴 最高气温 25 度。",
        },
        {"title": "上海天气", "url": "https://weather.example.cn/sh", "snippet": "上海多云"},
    ]
    assert api.last()["path"] == "/v1/web-search"
    assert api.last()["headers"]["authorization"] == "Bearer sk-b"
    assert api.json() == {"query": "天气", "count": 2, "summary": True}


async def test_bocha_error_code_in_a_200_answer(tmp_path, api):
    api.reply("/v1/web-search", {"code": 403, "msg": "余额不足", "data": None})
    with pytest.raises(ToolError, match=r"Bocha search failed: 余额不足"):
        await search(ctx_for(tmp_path, api), "x", {"BOCHA_API_KEY": "k"}, provider="bocha")


async def test_qianfan(tmp_path, api):
    api.reply(
        "/v2/ai_search/web_search",
        {
            "request_id": "req-1",
            "references": [
                {
                    "id": 1,
                    "title": "百度百科 Python",
                    "url": "https://baike.example.com/python",
                    "content": "Python 是一种解释型语言。",
                    "date": "2026-01-01",
                    "type": "web",
                }
            ],
        },
    )
    result = await search(
        ctx_for(tmp_path, api),
        "python",
        {"QIANFAN_API_KEY": "bce-v3/k"},
        provider="qianfan",
        maxResults=3,
    )
    assert result["results"] == [
        {
            "title": "百度百科 Python",
            "url": "https://baike.example.com/python",
            "snippet": "Python 是一种解释型语言。",
        }
    ]
    assert api.last()["headers"]["authorization"] == "Bearer bce-v3/k"
    assert api.json() == {
        "messages": [{"role": "user", "content": "python"}],
        "search_source": "baidu_search_v2",
        "resource_type_filter": [{"type": "web", "top_k": 3}],
    }


async def test_qianfan_error_answer(tmp_path, api):
    api.reply(
        "/v2/ai_search/web_search",
        {"request_id": "r", "code": 216003, "message": "Authentication error"},
    )
    with pytest.raises(ToolError, match=r"Qianfan search failed: Authentication error"):
        await search(ctx_for(tmp_path, api), "x", {"QIANFAN_API_KEY": "k"}, provider="qianfan")


async def test_duckduckgo_html(tmp_path, api):
    api.reply("/html/", DDG_PAGE, content_type="text/html; charset=utf-8")
    result = await search(ctx_for(tmp_path, api), "rust async", provider="duckduckgo")
    assert result == {
        "query": "rust async",
        "provider": "duckduckgo",
        "count": 2,
        "results": [
            {
                "title": "Asynchronous Programming in Rust",
                "url": "https://rust-lang.github.io/async-book/",
                "snippet": "Getting Started. Welcome to Asynchronous Programming in Rust! This book & more.",
            },
            {
                "title": "Tutorial | Tokio",
                "url": "https://tokio.rs/tokio/tutorial?x=1",
                "snippet": "Tokio is an asynchronous runtime.",
            },
        ],
    }
    assert (api.last()["method"], api.last()["path"]) == ("POST", "/html/")
    assert api.form() == {"q": "rust async"}
    assert "Mozilla/5.0" in api.last()["headers"]["user-agent"]


async def test_duckduckgo_bot_check_is_explained(tmp_path, api):
    api.reply("/html/", DDG_ANOMALY, status=202, content_type="text/html")
    with pytest.raises(ToolError, match=r"bot check.*TAVILY_API_KEY"):
        await search(ctx_for(tmp_path, api), "x", provider="duckduckgo")


async def test_duckduckgo_no_results(tmp_path, api):
    api.reply("/html/", '<div class="no-results">No results.</div>', content_type="text/html")
    result = await search(ctx_for(tmp_path, api), "zzqx", provider="duckduckgo")
    assert (result["count"], result["results"]) == (0, [])


async def test_searxng(tmp_path, api):
    api.reply(
        "/search",
        {
            "query": "httpx",
            "number_of_results": 0,
            "results": [
                {
                    "url": "https://www.python-httpx.org/",
                    "title": "HTTPX",
                    "content": "A next-generation HTTP client.",
                    "engine": "bing",
                    "score": 3.0,
                },
                {
                    "url": "https://github.com/encode/httpx",
                    "title": "encode/httpx",
                    "content": "",
                    "engine": "google",
                },
            ],
            "answers": [],
            "suggestions": [],
        },
    )
    result = await search(ctx_for(tmp_path, api), "httpx", provider="searxng")
    assert [r["url"] for r in result["results"]] == [
        "https://www.python-httpx.org/",
        "https://github.com/encode/httpx",
    ]
    assert result["results"][1]["snippet"] == ""
    sent = api.last()
    assert (sent["method"], sent["path"], sent["query"]) == (
        "GET",
        "/search",
        {"q": "httpx", "format": "json", "pageno": "1"},
    )


async def test_searxng_needs_an_instance(tmp_path):
    with pytest.raises(ToolError, match=r"webSearch\.searxng\.baseUrl"):
        await search(ToolContext(cwd=tmp_path), "x", provider="searxng")


async def test_baidu(tmp_path, api):
    api.reply(
        "/s",
        {
            "feed": {
                "entry": [
                    {
                        "title": "Python 官网",
                        "url": "https://www.python.org/",
                        "abs": "Python 是一种编程语言",
                        "time": 1700000000,
                    },
                    {"title": "", "url": ""},
                    {
                        "title": "菜鸟教程",
                        "url": "https://runoob.example.com/python",
                        "abs": "Python 基础教程",
                    },
                ]
            }
        },
    )
    result = await search(ctx_for(tmp_path, api), "python", provider="baidu")
    assert result["results"] == [
        {
            "title": "Python 官网",
            "url": "https://www.python.org/",
            "snippet": "Python 是一种编程语言",
        },
        {
            "title": "菜鸟教程",
            "url": "https://runoob.example.com/python",
            "snippet": "Python 基础教程",
        },
    ]
    sent = api.last()
    assert (sent["method"], sent["path"]) == ("GET", "/s")
    assert sent["query"] == {"wd": "python", "rn": "8", "pn": "0", "tn": "json", "ie": "utf-8"}


async def test_baidu_captcha_page_is_an_error(tmp_path, api):
    api.reply("/s", "<html>百度安全验证</html>", content_type="text/html")
    with pytest.raises(ToolError, match=r"Baidu answered with something other than JSON"):
        await search(ctx_for(tmp_path, api), "python", provider="baidu")


# Choosing a provider, keys and endpoints


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        (
            {
                "TAVILY_API_KEY": "t",
                "BRAVE_API_KEY": "b",
                "BOCHA_API_KEY": "c",
                "QIANFAN_API_KEY": "q",
            },
            "tavily",
        ),
        ({"BRAVE_API_KEY": "b", "BOCHA_API_KEY": "c", "QIANFAN_API_KEY": "q"}, "brave"),
        ({"BRAVE_SEARCH_API_KEY": "b", "QIANFAN_API_KEY": "q"}, "brave"),
        ({"BOCHA_API_KEY": "c", "QIANFAN_API_KEY": "q"}, "bocha"),
        ({"QIANFAN_API_KEY": "q"}, "qianfan"),
        ({"TAVILY_API_KEY": "  "}, "duckduckgo"),
        ({}, "duckduckgo"),
    ],
)
def test_auto_picks_the_first_keyed_provider_with_a_key(environ, expected):
    assert choose_provider("auto", {}, environ) == expected


def test_auto_counts_keys_from_the_config_and_honours_a_configured_provider():
    assert choose_provider("auto", {"bocha": {"apiKey": "k"}}, {"QIANFAN_API_KEY": "q"}) == "bocha"
    assert choose_provider("auto", {"provider": "searxng"}, {"TAVILY_API_KEY": "t"}) == "searxng"
    assert choose_provider("baidu", {"provider": "searxng"}, {}) == "baidu"
    with pytest.raises(ToolError, match=r"Unknown search provider 'bing'"):
        choose_provider("auto", {"provider": "bing"}, {})


async def test_auto_without_keys_searches_duckduckgo(tmp_path, api):
    api.reply("/html/", DDG_PAGE, content_type="text/html")
    result = await search(ctx_for(tmp_path, api), "rust async")
    assert (result["provider"], result["count"]) == ("duckduckgo", 2)


async def test_auto_with_a_key_uses_that_provider(tmp_path, api):
    api.reply("/v1/web-search", {"code": 200, "data": {"webPages": {"value": []}}})
    result = await search(ctx_for(tmp_path, api), "x", {"BOCHA_API_KEY": "k"})
    assert (result["provider"], api.last()["path"]) == ("bocha", "/v1/web-search")


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("tavily", "TAVILY_API_KEY"),
        ("brave", "BRAVE_API_KEY"),
        ("bocha", "BOCHA_API_KEY"),
        ("qianfan", "QIANFAN_API_KEY"),
    ],
)
async def test_missing_key_is_an_actionable_error(tmp_path, api, provider, variable):
    with pytest.raises(
        ToolError,
        match=f"needs an API key: set {variable} .*webSearch.{provider}.apiKey.*duckduckgo",
    ):
        await search(ctx_for(tmp_path, api), "x", provider=provider)
    assert api.requests == []


async def test_key_from_the_config(tmp_path, api):
    api.reply("/search", {"results": []})
    ctx = ToolContext(
        cwd=tmp_path, config={"webSearch": {"tavily": {"baseUrl": api.url, "apiKey": "cfg-key"}}}
    )
    await search(ctx, "x", provider="tavily")
    assert api.last()["headers"]["authorization"] == "Bearer cfg-key"


async def test_endpoint_from_the_environment(tmp_path, api):
    api.reply("/res/v1/web/search", {"web": {"results": []}})
    environ = {"BRAVE_API_KEY": "b", "AGENTLS_BRAVE_BASE_URL": api.url}
    result = await search(ToolContext(cwd=tmp_path), "x", environ, provider="brave")
    assert result["count"] == 0
    assert api.last()["path"] == "/res/v1/web/search"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, r"Tavily rejected the API key \(HTTP 401\); check TAVILY_API_KEY"),
        (429, "rate-limited"),
        (500, r"HTTP 500: boom \*\*\* boom"),
    ],
)
async def test_http_errors_are_explained_without_the_key(tmp_path, api, status, message):
    api.reply("/search", "boom secret-key boom", status=status, content_type="text/plain")
    with pytest.raises(ToolError, match=message) as err:
        await search(
            ctx_for(tmp_path, api), "x", {"TAVILY_API_KEY": "secret-key"}, provider="tavily"
        )
    assert "secret-key" not in str(err.value)


async def test_slow_provider_times_out(tmp_path, api):
    api.reply("/search", {"results": []})
    api.delay = 2.0
    with pytest.raises(ToolError, match=r"did not answer in time"):
        await search(
            ctx_for(tmp_path, api, timeout=0.3), "x", {"TAVILY_API_KEY": "k"}, provider="tavily"
        )


# Results: dedupe, caps, filters


def searx_results(*items) -> dict:
    return {"results": [{"title": t, "url": u, "content": c} for t, u, c in items]}


async def test_results_are_deduped_cleaned_and_capped(tmp_path, api):
    api.reply(
        "/search",
        searx_results(
            ("A <b>bold</b>\n title", "https://example.com/page", "x" * 1000),
            ("dup: trailing slash", "https://example.com/page/", "dup"),
            ("dup: www and fragment", "https://www.example.com/page#top", "dup"),
            ("other query", "https://example.com/page?v=2", "kept"),
            ("not the web", "javascript:alert(1)", "dropped"),
            ("", "https://untitled.example/", ""),
        ),
    )
    result = await search(ctx_for(tmp_path, api), "x", provider="searxng")
    assert [r["url"] for r in result["results"]] == [
        "https://example.com/page",
        "https://example.com/page?v=2",
        "https://untitled.example/",
    ]
    first = result["results"][0]
    assert first["title"] == "A bold title"
    assert len(first["snippet"]) == 400 and first["snippet"].endswith("…")
    assert result["results"][2]["title"] == "untitled.example"


async def test_max_results(tmp_path, api):
    items = [(f"r{i}", f"https://e{i}.example/", "") for i in range(25)]
    api.reply("/search", searx_results(*items))
    assert (await search(ctx_for(tmp_path, api), "x", provider="searxng"))["count"] == 8
    assert (await search(ctx_for(tmp_path, api), "x", provider="searxng", maxResults=20))[
        "count"
    ] == 20
    assert (await search(ctx_for(tmp_path, api, maxResults=3), "x", provider="searxng"))[
        "count"
    ] == 3
    with pytest.raises(ValueError):
        WebSearch.Input(query="x", maxResults=21)
    with pytest.raises(ValueError):
        WebSearch.Input(query="", maxResults=2)


async def test_domain_filters(tmp_path, api):
    api.reply(
        "/search",
        searx_results(
            ("py", "https://docs.python.org/3/", ""),
            ("root", "https://python.org/", ""),
            ("other", "https://pypi.org/project/x/", ""),
            ("lookalike", "https://notpython.org/", ""),
            ("spam", "https://spam.python.org/", ""),
        ),
    )
    ctx = ctx_for(tmp_path, api)
    kept = await search(ctx, "x", provider="searxng", allowedDomains=["python.org"])
    assert [r["title"] for r in kept["results"]] == ["py", "root", "spam"]
    assert api.last()["query"]["q"] == "x site:python.org"
    subs = await search(
        ctx,
        "x",
        provider="searxng",
        allowedDomains=["*.python.org"],
        blockedDomains=["https://spam.python.org/"],
    )
    assert [r["title"] for r in subs["results"]] == ["py"]
    configured = ctx_for(tmp_path, api, blockedDomains=["pypi.org"])
    assert "other" not in [
        r["title"] for r in (await search(configured, "x", provider="searxng"))["results"]
    ]


async def test_provider_side_domain_filters(tmp_path, api):
    api.reply("/search", {"results": []})
    await search(
        ctx_for(tmp_path, api),
        "x",
        {"TAVILY_API_KEY": "k"},
        provider="tavily",
        allowedDomains=["a.com", "b.com"],
        blockedDomains=["c.com"],
        maxResults=4,
    )
    assert api.json() == {
        "query": "x",
        "max_results": 8,
        "include_domains": ["a.com", "b.com"],
        "exclude_domains": ["c.com"],
    }


# Tool metadata


def test_tool_metadata_and_permission(tmp_path):
    tool = WebSearch()
    args = WebSearch.Input(query="rust async book")
    assert (tool.name, tool.read_only, tool.kind) == ("web_search", True, "fetch")
    assert tool.title(args) == 'Search the web for "rust async book"'
    assert decide(tool, args, ToolContext(cwd=tmp_path), PermissionState()).action == "ask"
    assert set(WebSearch.Input.model_json_schema()["properties"]["provider"]["enum"]) == {
        "auto",
        *ALL,
    }

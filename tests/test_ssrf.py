"""The SSRF guard, rule by rule, with an injected resolver and transport: no network access."""

import socket
from ipaddress import IPv4Address, IPv6Address

import httpx
import pytest

from server.tools.base import ToolError
from server.tools.ssrf import (
    Guard,
    PinnedTransport,
    UnsafeURL,
    blocked_reason,
    domain_allowed,
    normalize_host,
)

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"


class FakeDNS:
    """Answers from a table, one list of answers per lookup (the last one repeats)."""

    def __init__(self, table: dict[str, list[str] | list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        answers = self.table[host]
        if answers and isinstance(answers[0], list):
            return answers.pop(0) if len(answers) > 1 else answers[0]
        return answers


def guard(table=None, **kw) -> tuple[Guard, FakeDNS]:
    dns = FakeDNS(table or {})
    return Guard(resolver=dns, **kw), dns


# Literal hosts: every blocked range, in every notation, refused without a DNS lookup.

BLOCKED_LITERALS = [
    # IPv4 ranges
    "http://127.0.0.1/",
    "http://127.255.255.254/",
    "http://0.0.0.0/",
    "http://0.1.2.3/",
    "http://10.0.0.1/",
    "http://10.255.255.255/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    "http://198.18.0.1/",
    "http://198.19.255.255/",
    "http://192.0.0.8/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    # other notations of IPv4
    "http://0/",
    "http://0x7f.1/",
    "http://0X7F.0.0.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://0177.1/",
    "http://127.1/",
    "http://127.0.1/",
    "http://10.1/",
    "http://3232235521/",
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://127.0.0.1./",
    "http://127.0.0.1:22/",
    "http://%31%32%37.0.0.1/",
    "http://%30x7f.1/",
    # IPv6 ranges and IPv4 embedded in IPv6
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::]/",
    "http://[fe80::1]/",
    "http://[febf:ffff::1]/",
    "http://[fc00::1]/",
    "http://[fd12:3456:789a::1]/",
    "http://[fec0::1]/",
    "http://[ff02::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[::ffff:0:7f00:1]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b::127.0.0.1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[64:ff9b:1::8.8.8.8]/",
    "http://[2002:7f00:1::1]/",
    "http://[2002:c0a8:101::1]/",
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
    "http://[::1]:8080/admin",
    # userinfo does not change the host
    "http://good.com@127.0.0.1/",
    "http://good.com:443@127.0.0.1/",
    "http://user:pass@[::1]/",
    "https://example.com@0x7f.1/",
]


@pytest.mark.parametrize("url", BLOCKED_LITERALS)
async def test_literal_internal_hosts_are_refused_without_lookup(url):
    g, dns = guard()
    with pytest.raises(UnsafeURL):
        await g.check(url)
    assert dns.calls == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://0x7f.1/", "loopback address 127.0.0.1"),
        ("http://2130706433/", "loopback address 127.0.0.1"),
        ("http://0/", "unspecified address 0.0.0.0"),
        ("http://169.254.169.254/", "link-local address 169.254.169.254"),
        ("http://100.64.0.1/", "carrier-grade NAT address 100.64.0.1"),
        ("http://[::ffff:7f00:1]/", "loopback address 127.0.0.1 (embedded in ::ffff:7f00:1)"),
        ("http://[64:ff9b::7f00:1]/", "loopback address 127.0.0.1 (embedded in 64:ff9b::7f00:1)"),
        ("http://[::]/", "unspecified address ::"),
        ("http://[fd00::1]/", "unique-local address fd00::1"),
    ],
)
async def test_refusal_names_the_range_and_the_address(url, reason):
    g, _ = guard()
    with pytest.raises(UnsafeURL, match=r"Refusing to fetch") as err:
        await g.check(url)
    assert reason in str(err.value)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        PUBLIC_V4,
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "169.253.255.255",
        "11.0.0.0",
        PUBLIC_V6,
        "::ffff:8.8.8.8",
        "64:ff9b::8.8.8.8",
        "2002:808:808::1",
    ],
)
def test_public_addresses_pass(address):
    from ipaddress import ip_address

    assert blocked_reason(ip_address(address)) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0x7f.1", IPv4Address("127.0.0.1")),
        ("0177.0.0.1", IPv4Address("127.0.0.1")),
        ("2130706433", IPv4Address("127.0.0.1")),
        ("127.1", IPv4Address("127.0.0.1")),
        ("0", IPv4Address("0.0.0.0")),
        ("0x", IPv4Address("0.0.0.0")),
        ("1.0x10.0300", IPv4Address("1.16.0.192")),
        ("4294967295", IPv4Address("255.255.255.255")),
        ("%31%32%37.0.0.1", IPv4Address("127.0.0.1")),
        ("127.0.0.1.", IPv4Address("127.0.0.1")),
        ("\uff11\uff12\uff17.\uff10.\uff10.\uff11", IPv4Address("127.0.0.1")),  # fullwidth digits
        ("[::ffff:127.0.0.1]", IPv6Address("::ffff:7f00:1")),
        ("::", IPv6Address("::")),
        ("LOCALHOST.", "localhost"),
        ("Example.COM", "example.com"),
        ("ex%61mple.com", "example.com"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("1.2.3.4a", "1.2.3.4a"),
        ("under_score.example", "under_score.example"),
    ],
)
def test_hosts_are_normalised_before_the_check(raw, expected):
    assert normalize_host(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "1.2.3.4.5",
        "256.0.0.1",
        "1.2.3.256",
        "1.2.65536",
        "4294967296",
        "0x100000000",
        "1.2.3.08",
        "08.0.0.1",
        "12_7.0.0.1",
        "+127.0.0.1",
        "0x0x7f.1",
        "0x7g.1",
        "foo.123",
        "foo.0x1",
        "fe80::1%25eth0",
        "[fe80::1%eth0]",
        "%2531%2532%2537.0.0.1",
        "a..b",
        "",
        ".",
        "exa mple.com",
        "evil.com/x",
        "::ffff:127.0.0.1:80",
    ],
)
def test_malformed_hosts_are_refused(raw):
    with pytest.raises(UnsafeURL):
        normalize_host(raw)


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/",
        "http://LOCALHOST/",
        "http://localhost./",
        "http://localhost:8080/",
        "http://foo.localhost/",
        "http://a.b.Localhost./",
        "http://localhost.localdomain/",
        "http://ip6-localhost/",
    ],
)
async def test_local_names_are_refused_before_resolving(url):
    g, dns = guard({"localhost": [PUBLIC_V4]})
    with pytest.raises(UnsafeURL, match=r"local host"):
        await g.check(url)
    assert dns.calls == []


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://example.com:70/",
        "javascript:alert(1)",
        "data:text/html,hi",
        "example.com/path",
        "//example.com/",
        "http:///path",
    ],
)
async def test_only_http_and_https_urls_are_fetched(url):
    g, dns = guard({"example.com": [PUBLIC_V4]})
    with pytest.raises(UnsafeURL):
        await g.check(url)
    assert dns.calls == []


@pytest.mark.parametrize(
    "url",
    [
        "http://good.com\\@127.0.0.1/",
        "http://127.0.0.1\\.good.com/",
        "http://good.com /",
        "http://good.com\t@127.0.0.1/",
        "http://good.com/\r\nHost: 127.0.0.1",
        "http://good.com\x00.evil/",
    ],
)
async def test_urls_that_parsers_read_differently_are_refused(url):
    g, dns = guard({"good.com": [PUBLIC_V4]})
    with pytest.raises(UnsafeURL, match=r"Invalid URL"):
        await g.check(url)
    assert dns.calls == []


# DNS answers


async def test_a_public_name_is_pinned_to_its_first_ipv4_address():
    g, dns = guard({"example.com": [PUBLIC_V6, PUBLIC_V4, "8.8.8.8"], "v6.example": [PUBLIC_V6]})
    assert await g.check("https://example.com/page") == PUBLIC_V4
    assert await g.check("https://v6.example/page") == PUBLIC_V6
    assert dns.calls == ["example.com", "v6.example"]


async def test_names_are_resolved_in_normalised_form():
    g, dns = guard({"xn--bcher-kva.de": [PUBLIC_V4], "example.com": [PUBLIC_V4]})
    await g.check("http://bücher.de/")
    await g.check("http://EXAMPLE.com./")
    assert dns.calls == ["xn--bcher-kva.de", "example.com"]


@pytest.mark.parametrize(
    ("answers", "bad"),
    [
        ([PUBLIC_V4, "10.0.0.5"], "10.0.0.5"),
        (["10.0.0.5", PUBLIC_V4], "10.0.0.5"),
        ([PUBLIC_V4, PUBLIC_V6, "::1"], "::1"),
        ([PUBLIC_V6, "fd00::7"], "fd00::7"),
        (["169.254.169.254"], "169.254.169.254"),
        (["::ffff:169.254.169.254"], "169.254.169.254"),
        (["64:ff9b::c0a8:1"], "192.168.0.1"),
        (["fe80::1%eth0"], "fe80::1"),
        (["0.0.0.0"], "0.0.0.0"),
    ],
)
async def test_any_internal_answer_refuses_the_host(answers, bad):
    g, _ = guard({"mixed.example": answers})
    with pytest.raises(UnsafeURL, match=r"Refusing to fetch mixed.example") as err:
        await g.check("http://mixed.example/")
    assert bad in str(err.value)


async def test_cloud_metadata_name_is_refused_by_its_address():
    g, _ = guard({"metadata.google.internal": ["169.254.169.254"]})
    with pytest.raises(UnsafeURL, match=r"link-local"):
        await g.check("http://metadata.google.internal/computeMetadata/v1/")


async def test_resolution_failures_are_tool_errors():
    g, _ = guard({"empty.example": [], "weird.example": ["not-an-ip"]})
    with pytest.raises(ToolError, match=r"Could not resolve host nowhere.example"):
        await g.check("http://nowhere.example/")
    with pytest.raises(ToolError, match=r"no addresses"):
        await g.check("http://empty.example/")
    with pytest.raises(UnsafeURL, match=r"malformed address"):
        await g.check("http://weird.example/")


# allowedDomains


@pytest.mark.parametrize(
    ("allowed", "host", "ok"),
    [
        (["*"], "anything.example", True),
        (["example.com"], "example.com", True),
        (["example.com"], "www.example.com", False),
        (["example.com"], "badexample.com", False),
        (["*.example.com"], "docs.example.com", True),
        (["*.example.com"], "a.b.example.com", True),
        (["*.example.com"], "example.com", False),
        (["*.example.com"], "badexample.com", False),
        (["*.example.com"], "example.com.evil.net", False),
        (["EXAMPLE.com."], "example.com", True),
        (["bücher.de"], "xn--bcher-kva.de", True),
        (["*.bücher.de"], "shop.xn--bcher-kva.de", True),
        (["a.com", "*.b.com"], "x.b.com", True),
        (["a.com", "*.b.com"], "b.com", False),
        ([], "example.com", False),
        (["*.0.0.1"], IPv4Address("127.0.0.1"), False),
        (["127.0.0.1"], IPv4Address("127.0.0.1"), True),
        (["2130706433"], IPv4Address("127.0.0.1"), True),
    ],
)
def test_allowed_domains_matching(allowed, host, ok):
    assert domain_allowed(host, allowed) is ok


async def test_allowed_domains_apply_to_the_real_host_not_the_userinfo():
    g, dns = guard({"evil.net": [PUBLIC_V4]}, allowed_domains=["example.com"])
    with pytest.raises(UnsafeURL, match=r"not in webFetch.allowedDomains"):
        await g.check("http://example.com@evil.net/")
    assert dns.calls == []


async def test_allowed_domains_are_checked_before_resolving():
    g, dns = guard({"docs.example.com": [PUBLIC_V4]}, allowed_domains=["*.example.com"])
    assert await g.check("https://Docs.Example.com./x") == PUBLIC_V4
    with pytest.raises(UnsafeURL, match=r"allowedDomains \(\*\.example\.com\)"):
        await g.check("https://example.org/")
    assert dns.calls == ["docs.example.com"]


# allowPrivateHosts


async def test_allow_private_hosts_opts_out_of_the_address_rules():
    g, _ = guard(
        {"localhost": ["127.0.0.1", "::1"], "intranet": ["10.1.2.3"]}, allow_private_hosts=True
    )
    assert await g.check("http://127.0.0.1:8000/") == "127.0.0.1"
    assert await g.check("http://0x7f.1/") == "127.0.0.1"
    assert await g.check("http://[::1]/") == "::1"
    assert await g.check("http://localhost/") == "127.0.0.1"
    assert await g.check("http://intranet/") == "10.1.2.3"


async def test_allow_private_hosts_keeps_the_other_rules():
    g, _ = guard({"intranet": ["10.1.2.3"]}, allow_private_hosts=True, allowed_domains=["intranet"])
    assert await g.check("http://intranet/") == "10.1.2.3"
    for url in ("file:///etc/passwd", "http://127.0.0.1/", "http://a\\@intranet/"):
        with pytest.raises(UnsafeURL):
            await g.check(url)


# The transport: every request checked, the connection pinned to the checked address.


class Recorder:
    """An inner transport that records what would have been sent on the wire."""

    def __init__(self, reply=None) -> None:
        self.requests: list[httpx.Request] = []
        self.reply = reply or (lambda request: httpx.Response(200, text="ok"))

    def transport(self) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return self.reply(request)

        return httpx.MockTransport(handle)


def pinned_client(g: Guard, recorder: Recorder, **kw) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=PinnedTransport(g, recorder.transport()), **kw)


async def test_connection_goes_to_the_checked_address_even_when_dns_rebinds():
    # The second answer would point at loopback: only the first, checked one is ever used.
    g, dns = guard({"rebind.example": [[PUBLIC_V4], ["127.0.0.1"]]})
    wire = Recorder()
    async with pinned_client(g, wire) as client:
        response = await client.get("http://rebind.example:8080/a/b?q=1")
        with pytest.raises(UnsafeURL, match=r"loopback address 127.0.0.1"):
            await client.get("http://rebind.example:8080/again")
    assert response.status_code == 200
    assert response.url == "http://rebind.example:8080/a/b?q=1"
    assert [str(r.url) for r in wire.requests] == [f"http://{PUBLIC_V4}:8080/a/b?q=1"]
    assert wire.requests[0].headers["host"] == "rebind.example:8080"
    assert dns.calls == ["rebind.example", "rebind.example"]


async def test_https_keeps_the_host_name_for_tls():
    g, _ = guard({"secure.example": [PUBLIC_V6]})
    wire = Recorder()
    async with pinned_client(g, wire) as client:
        await client.get("https://secure.example/x")
    sent = wire.requests[0]
    assert str(sent.url) == f"https://[{PUBLIC_V6}]/x"
    assert sent.headers["host"] == "secure.example"
    assert sent.extensions["sni_hostname"] == "secure.example"


async def test_literal_notations_connect_to_the_normalised_address():
    g, _ = guard(allow_private_hosts=True)
    wire = Recorder()
    async with pinned_client(g, wire) as client:
        await client.get("http://0x7f.1:9/")
        await client.get("http://2130706433:9/")
    assert [r.url.host for r in wire.requests] == ["127.0.0.1", "127.0.0.1"]


async def test_each_redirect_hop_is_checked_again():
    g, dns = guard({"public.example": [PUBLIC_V4], "internal.example": ["192.168.1.10"]})

    def reply(request):
        return httpx.Response(302, headers={"location": "http://internal.example/admin"})

    wire = Recorder(reply)
    async with pinned_client(g, wire, follow_redirects=True) as client:
        with pytest.raises(UnsafeURL, match=r"private address 192.168.1.10"):
            await client.get("http://public.example/")
    assert len(wire.requests) == 1
    assert dns.calls == ["public.example", "internal.example"]

"""The SSRF guard for outbound fetches: which URLs may be fetched, and connecting only there.

A URL passes when its scheme is http or https, its host matches `allowedDomains`, and — unless
`allowPrivateHosts` — neither the host name nor any address it resolves to is internal
(loopback, private, link-local, CGNAT, ... in IPv4, IPv6, IPv4-mapped and NAT64 forms).
Hosts are normalised the way browsers do before the check: percent-decoding, IDNA, a trailing
dot, and IPv4 written as one integer, in octal or hex parts, or with fewer than four parts.

`Guard.check` returns the checked address; `PinnedTransport` connects to that address only,
so a second DNS answer cannot rebind the host between the check and the connection. Every
request through the transport, redirects included, is checked again.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from ipaddress import IPv4Address, IPv6Address, ip_address
from urllib.parse import unquote

import httpx

from .base import ToolError
from .internal_addresses import Address, blocked_reason

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolves (host, port) to every address the host has, as strings."""

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_IPV4_PARTS = [
    (re.compile(r"0[xX]([0-9a-fA-F]*)"), 16),
    (re.compile(r"0([0-7]+)"), 8),
    (re.compile(r"(0|[1-9][0-9]*)", re.ASCII), 10),
]
_HOST_CHARS = re.compile(r"^[a-z0-9_.-]+$")
_URL_JUNK = re.compile(r"[\\\s\x00-\x1f\x7f]")


class UnsafeURL(ToolError):
    """The URL is refused by the SSRF rules or the domain allow-list."""


def parse_ipv4(host: str) -> IPv4Address | None:
    """The IPv4 address a host written in any legacy form stands for (`0x7f.1`, `2130706433`,
    `0177.0.0.1`), None when the host is a name; raises UnsafeURL for a malformed number."""
    parts = host.split(".")
    if not _is_number(parts[-1]):
        return None
    numbers = [_ipv4_part(p, host) for p in parts]
    if len(numbers) > 4 or any(n > 255 for n in numbers[:-1]):
        raise UnsafeURL(f"Invalid IPv4 address in host {host!r}")
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        raise UnsafeURL(f"Invalid IPv4 address in host {host!r}")
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - index))
    return IPv4Address(value)


def _is_number(part: str) -> bool:
    if part.isdecimal() and part.isascii():
        return True
    return part[:2] in ("0x", "0X") and all(c in "0123456789abcdefABCDEF" for c in part[2:])


def _ipv4_part(part: str, host: str) -> int:
    for pattern, base in _IPV4_PARTS:
        match = pattern.fullmatch(part)
        if match:
            return int(match.group(1) or "0", base)
    raise UnsafeURL(f"Invalid IPv4 address in host {host!r}")


def normalize_host(raw: str) -> str | Address:
    """The host as it will be resolved: an address for IP literals in any notation, else the
    lower-case ASCII (IDNA) name without trailing dots. Raises UnsafeURL when malformed."""
    host = unquote(raw)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if "%" in host:
        raise UnsafeURL(f"Host {raw!r} is percent-encoded twice or has an IPv6 zone id")
    if ":" in host:
        try:
            return IPv6Address(host)
        except ValueError:
            raise UnsafeURL(f"Invalid IPv6 address {raw!r}") from None
    host = _to_ascii(host.rstrip("."), raw)
    if not host or not _HOST_CHARS.match(host) or ".." in host:
        raise UnsafeURL(f"Invalid host name {raw!r}")
    return parse_ipv4(host) or host


def _to_ascii(host: str, raw: str) -> str:
    if host.isascii():
        return host.lower()
    import idna

    try:
        return idna.encode(host, uts46=True).decode("ascii").lower()
    except idna.IDNAError:
        raise UnsafeURL(f"Invalid international host name {raw!r}") from None


def domain_allowed(host: str | Address, allowed: Sequence[str]) -> bool:
    """`*` allows everything, `*.x.com` the subdomains of x.com only, `x.com` exactly x.com."""
    name = str(host)
    for entry in allowed:
        entry = entry.strip().lower().rstrip(".")
        if entry == "*":
            return True
        if entry.startswith("*."):
            if isinstance(host, str) and name.endswith("." + _to_ascii(entry[2:], entry)):
                return True
        elif name == _entry_host(entry):
            return True
    return False


def _entry_host(entry: str) -> str:
    try:
        return str(normalize_host(entry))
    except UnsafeURL:
        return entry


def parse_url(url: str | httpx.URL) -> httpx.URL:
    """Parse a URL the model gave, refusing what browsers and httpx read differently."""
    if isinstance(url, str):
        if _URL_JUNK.search(url):
            raise UnsafeURL(
                f"Invalid URL {url!r}: it has a backslash, space or control character; "
                "percent-encode them"
            )
        try:
            url = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise UnsafeURL(f"Invalid URL {url!r}: {exc}") from None
    if url.scheme not in ("http", "https"):
        what = f"{url.scheme}: URLs" if url.scheme else f"{url} (no scheme)"
        raise UnsafeURL(f"Only http:// and https:// URLs can be fetched, not {what}")
    if not url.raw_host:
        raise UnsafeURL(f"URL {url} has no host")
    return url


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address the operating system resolves `host` to."""
    import anyio

    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class Guard:
    """Applies the SSRF rules to URLs and says which address each may be fetched from."""

    def __init__(
        self,
        *,
        allowed_domains: Sequence[str] = ("*",),
        allow_private_hosts: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        self.allowed_domains = list(allowed_domains)
        self.allow_private_hosts = allow_private_hosts
        self.resolver = resolver or system_resolver

    async def check(self, url: str | httpx.URL) -> str:
        """The address to connect to for `url`; raises UnsafeURL when the URL is refused."""
        url = parse_url(url)
        host = normalize_host(url.raw_host.decode("ascii"))
        if not domain_allowed(host, self.allowed_domains):
            raise UnsafeURL(
                f"Host {host} is not in webFetch.allowedDomains "
                f"({', '.join(self.allowed_domains) or 'empty'}); fetch an allowed site instead"
            )
        if not isinstance(host, str):
            self._check_address(host, host)
            return str(host)
        self._check_name(host)
        addresses = await self._resolve(host, url.port or (443 if url.scheme == "https" else 80))
        for address in addresses:
            self._check_address(address, host)
        # IPv4 first: many hosts and containers have no working IPv6 route.
        return str(min(addresses, key=lambda a: a.version))

    def _check_name(self, host: str) -> None:
        if self.allow_private_hosts:
            return
        if host in LOCAL_NAMES or host.endswith(".localhost"):
            raise UnsafeURL(f"Refusing to fetch local host {host}")

    def _check_address(self, address: Address, host: str | Address) -> None:
        if self.allow_private_hosts:
            return
        reason = blocked_reason(address)
        if reason:
            raise UnsafeURL(
                f"Refusing to fetch {host}: {reason} is not public; web_fetch only reaches public "
                "addresses"
            )

    async def _resolve(self, host: str, port: int) -> list[Address]:
        try:
            answers = await self.resolver(host, port)
        except OSError as exc:
            raise ToolError(f"Could not resolve host {host}: {exc}") from None
        addresses = []
        for answer in answers:
            try:
                addresses.append(ip_address(answer.split("%", 1)[0]))
            except ValueError:
                raise UnsafeURL(f"Host {host} resolved to a malformed address {answer!r}") from None
        if not addresses:
            raise ToolError(f"Could not resolve host {host}: no addresses")
        return addresses


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that checks each request with the guard and connects to the checked
    address, keeping the original Host header and TLS server name."""

    def __init__(self, guard: Guard, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.guard = guard
        self.inner = inner or httpx.AsyncHTTPTransport(retries=0)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        address = await self.guard.check(request.url)
        extensions = dict(request.extensions)
        if request.url.scheme == "https":
            extensions["sni_hostname"] = request.url.raw_host.decode("ascii")
        pinned = httpx.Request(
            request.method,
            request.url.copy_with(host=address),
            headers=request.headers,
            stream=request.stream,
            extensions=extensions,
        )
        return await self.inner.handle_async_request(pinned)

    async def aclose(self) -> None:
        await self.inner.aclose()

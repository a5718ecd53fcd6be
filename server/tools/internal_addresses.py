"""Addresses no outbound connection of agentls may reach on its own: loopback, private,
link-local (cloud metadata), CGNAT and the other special ranges, in IPv4, IPv6, IPv4-mapped
and NAT64 forms. Used by `web_fetch`'s guard (`ssrf`) and the sandbox's host proxy."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_network

Address = IPv4Address | IPv6Address

_V4_RANGES = {
    "0.0.0.0/8": "unspecified",  # 0.0.0.0 reaches the local host on Linux
    "10.0.0.0/8": "private",
    "100.64.0.0/10": "carrier-grade NAT",
    "127.0.0.0/8": "loopback",
    "169.254.0.0/16": "link-local",
    "172.16.0.0/12": "private",
    "192.0.0.0/24": "IETF protocol assignment",
    "192.0.2.0/24": "documentation",
    "192.168.0.0/16": "private",
    "198.18.0.0/15": "benchmarking",
    "198.51.100.0/24": "documentation",
    "203.0.113.0/24": "documentation",
    "224.0.0.0/4": "multicast",
    "240.0.0.0/4": "reserved",
}
_V6_RANGES = {
    "::/128": "unspecified",
    "::1/128": "loopback",
    "::/96": "IPv4-compatible",
    "64:ff9b:1::/48": "local NAT64",
    "100::/64": "discard-only",
    "2001:db8::/32": "documentation",
    "fc00::/7": "unique-local",
    "fe80::/10": "link-local",
    "fec0::/10": "site-local",
    "ff00::/8": "multicast",
}
BLOCKED_RANGES = [(ip_network(net), why) for net, why in {**_V4_RANGES, **_V6_RANGES}.items()]
_NAT64 = ip_network("64:ff9b::/96")
_V4_TRANSLATED = ip_network("::ffff:0:0:0/96")

def blocked_reason(address: Address) -> str | None:
    """Why `address` must not be fetched, or None when it is public."""
    for embedded in _embedded_v4(address):
        reason = blocked_reason(embedded)
        if reason:
            return f"{reason} (embedded in {address})"
    for network, why in BLOCKED_RANGES:
        if address.version == network.version and address in network:
            return f"{why} address {address}"
    return None


def _embedded_v4(address: Address) -> list[IPv4Address]:
    """IPv4 addresses an IPv6 address carries: mapped, translated, NAT64, 6to4, Teredo."""
    if not isinstance(address, IPv6Address):
        return []
    low32 = IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped or address in _V4_TRANSLATED or address in _NAT64:
        return [low32]
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return list(address.teredo)
    return []

"""The host side of a sandbox's allow-list of hosts: an HTTP proxy on a unix socket that
connects only to the hosts `sandbox.network` lists.

`CONNECT host:port` (HTTPS and any other TCP) and plain-HTTP requests in absolute form are
served. Refused with `403 Forbidden`, naming the host: a host not on the list (with `ask`, one
the user did not allow when asked); a port other than
80 and 443 unless the entry names it (`host:8443`); a name that resolves to a loopback, private,
link-local or metadata address (the guard `web_fetch` uses) unless the entry is that address
itself; a plain-HTTP request whose `Host` header names another host than its target. The
connection goes to the address that was checked, so a second DNS answer cannot move it.
The sandboxed side reaches the socket through `netbridge.py`. Threads, not the event loop: the
proxy lives as long as its sandbox and never waits on agentls's own work.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import shutil
import socket
import socketserver
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from server.tools.netbridge import pipe

log = logging.getLogger(__name__)

HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT_S = 30.0
DENIED_MARK = "is not in sandbox.network"


DEFAULT_PORTS = (80, 443)
HostAsker = Callable[[str, int], tuple[bool, bool]]
"""Asks the user whether a command may reach `host:port`: (allowed, for the whole session)."""


def split_port(pattern: str) -> tuple[str, int | None]:
    """(`host`, port or None) of `host[:port]` (`[::1]:8080` for an IPv6 address); port 0
    when the part after the colon is not one."""
    if pattern.startswith("["):
        host, _, rest = pattern[1:].partition("]")
        if not rest:
            return host, None
        port = rest.removeprefix(":")
    elif pattern.count(":") == 1:
        host, port = pattern.split(":")
    else:
        return pattern, None
    return host, int(port) if port.isdigit() and 0 < int(port) < 65536 else 0


def allowing(host: str, port: int, patterns: tuple[str, ...]) -> str | None:
    """The entry that allows `host:port`, or None. `example.com` allows that host on ports 80
    and 443, `*.example.com` its subdomains (not itself), `example.com:8443` that port alone."""
    host = host.strip("[]").lower().rstrip(".")
    for pattern in patterns:
        name, listed = split_port(pattern.lower())
        p = name.rstrip(".")
        if listed != port and not (listed is None and port in DEFAULT_PORTS):
            continue
        if host == p or (p.startswith("*.") and host.endswith(p[1:])):
            return pattern
    return None


def checked_address(host: str, port: int, entry: str) -> tuple[str | None, str]:
    """(the address to connect to, "") or (None, why the host is refused): a name may not lead
    to an internal address; an entry that is an address the user listed may."""
    from server.tools.internal_addresses import blocked_reason

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return None, f"cannot resolve {host}: {exc}"
    listed = split_port(entry)[0].strip("[]")
    for info in infos:
        address = str(info[4][0])
        reason = blocked_reason(ipaddress.ip_address(address.split("%")[0]))
        if reason and address != listed:
            return None, f"{host} resolves to a {reason}, which sandboxed commands cannot reach"
    return str(infos[0][4][0]), ""


def _target(line: str) -> tuple[str, str, int, str] | None:
    """(method, host, port, origin-form path) of a request line; None if it is not a proxy
    request."""
    parts = line.split(" ")
    if len(parts) != 3:
        return None
    method, target, _version = parts
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            return None
        return method, host.strip("[]"), int(port), ""
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        return None
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    return method, url.hostname, url.port or 80, path


def _host_header(headers: list[str]) -> str | None:
    for header in headers:
        name, _, value = header.partition(":")
        if name.strip().lower() == "host":
            return value.strip().lower()
    return None


def _same_host(header: str, host: str, port: int) -> bool:
    name, given = split_port(header)
    return name.strip("[]").rstrip(".") == host.lower().rstrip(".") and given in (None, port)


class _Handler(socketserver.BaseRequestHandler):
    server: HostProxy

    def handle(self) -> None:
        client: socket.socket = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk or len(head) > HEAD_LIMIT:
                return
            head += chunk
        top, _, rest = head.partition(b"\r\n\r\n")
        lines = top.decode("latin-1").split("\r\n")
        target = _target(lines[0])
        if target is None:
            self._answer(400, "agentls sandbox proxy: not a proxy request")
            return
        method, host, port, path = target
        entry = allowing(host, port, self.server.hosts)
        if entry is None and self.server.ask is not None and self.server.ask(host, port):
            entry = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if entry is None:
            self.server.refused.append(host)
            shown = host if port in DEFAULT_PORTS else f"{host}:{port}"
            why = f"allowed: {', '.join(self.server.hosts)}"
            if self.server.ask is not None:
                why = "and the user did not allow it when asked"
            self._answer(403, f"agentls sandbox: {shown} {DENIED_MARK} ({why})")
            return
        named = _host_header(lines[1:])
        if method != "CONNECT" and named is not None and not _same_host(named, host, port):
            self.server.refused.append(host)
            self._answer(403, f"agentls sandbox: the Host header {named} is not {host}")
            return
        address, why = checked_address(host, port, entry)
        if address is None:
            self.server.refused.append(host)
            self._answer(403, f"agentls sandbox: {why}")
            return
        try:
            upstream = socket.create_connection((address, port), timeout=CONNECT_TIMEOUT_S)
        except OSError as exc:
            self._answer(502, f"agentls sandbox proxy: cannot reach {host}:{port}: {exc}")
            return
        upstream.settimeout(None)
        with upstream:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                version = lines[0].rsplit(" ", 1)[1]
                headers = [h for h in lines[1:] if not h.lower().startswith("proxy-")]
                first = f"{method} {path} {version}"
                upstream.sendall("\r\n".join([first, *headers]).encode("latin-1") + b"\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
            back.start()
            pipe(client, upstream)
            back.join()

    def _answer(self, status: int, text: str) -> None:
        reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
        body = (text + "\n").encode()
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        try:
            self.request.sendall(head.encode() + body)
        except OSError:
            pass


class HostProxy(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Serves on `socket_path` in a folder of its own, on a daemon thread, until `close()`."""

    daemon_threads = True

    def __init__(self, hosts: tuple[str, ...], *, ask: Callable[[str, int], bool] | None = None):
        self.hosts = hosts
        self.ask = ask
        """Asks the user about a host not in `hosts` (blocking this connection's thread)."""
        self.refused: list[str] = []
        """Every host it refused, in order: a command that hides the 403 still shows here."""
        self._dir = Path(tempfile.mkdtemp(prefix="agentls-proxy-"))
        self.socket_path = str(self._dir / "proxy.sock")
        super().__init__(self.socket_path, _Handler)
        os.chmod(self.socket_path, 0o600)
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving and remove the socket, without waiting (the event loop calls this)."""
        threading.Thread(target=self._stop, daemon=True).start()

    def _stop(self) -> None:
        self.shutdown()  # returns once serve_forever has seen it: up to its poll interval
        self.server_close()
        shutil.rmtree(self._dir, ignore_errors=True)

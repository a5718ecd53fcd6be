"""The host side of a sandbox's allow-list of hosts: an HTTP proxy on a unix socket that
connects only to the hosts `sandbox.network` lists.

`CONNECT host:port` (HTTPS and any other TCP) and plain-HTTP requests in absolute form are
served; a host not on the list gets `403 Forbidden` naming it. The sandboxed side reaches the
socket through `netbridge.py`. Threads, not the event loop: the proxy lives as long as its
sandbox and never waits on agentls's own work.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import socketserver
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

from server.tools.netbridge import pipe

log = logging.getLogger(__name__)

HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT_S = 30.0
DENIED_MARK = "is not in sandbox.network"


def host_allowed(host: str, patterns: tuple[str, ...]) -> bool:
    """`example.com` allows that host; `*.example.com` its subdomains (not itself)."""
    host = host.strip("[]").lower().rstrip(".")
    for pattern in patterns:
        p = pattern.lower().rstrip(".")
        if host == p or (p.startswith("*.") and host.endswith(p[1:])):
            return True
    return False


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
        if not host_allowed(host, self.server.hosts):
            self.server.refused.append(host)
            allowed = ", ".join(self.server.hosts)
            self._answer(403, f"agentls sandbox: {host} {DENIED_MARK} (allowed: {allowed})")
            return
        try:
            upstream = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
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

    def __init__(self, hosts: tuple[str, ...]):
        self.hosts = hosts
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

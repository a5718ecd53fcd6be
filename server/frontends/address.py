"""Where a resident server listens: one spelling for `serve --listen` and `serve --connect`.

    unix:PATH                a Unix socket, created 0600 (the default, in the runtime dir)
    tcp://127.0.0.1:PORT     LSP framing over TCP; a token is required
    ws://127.0.0.1:PORT      JSON-RPC in WebSocket text frames; a token is required

Standard library only: the bridge (`serve --connect`) imports this and must start fast.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from server.logs import runtime_dir

Scheme = Literal["unix", "tcp", "ws"]
MAX_UNIX_PATH = 107


class AddressError(ValueError):
    """An address that cannot be used, said in words."""


@dataclass(frozen=True)
class Address:
    scheme: Scheme
    path: Path | None = None
    host: str = ""
    port: int = 0

    def __str__(self) -> str:
        if self.scheme == "unix":
            return f"unix:{self.path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def needs_token(self) -> bool:
        return self.scheme != "unix"

    @property
    def loopback(self) -> bool:
        if self.scheme == "unix":
            return True
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse(text: str) -> Address:
    if text.startswith("unix:"):
        path = Path(text.removeprefix("unix:")).expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        if len(str(path)) > MAX_UNIX_PATH:
            raise AddressError(
                f"a Unix socket path is limited to {MAX_UNIX_PATH} characters: {path}"
            )
        return Address("unix", path=path)
    parts = urlsplit(text)
    if parts.scheme not in ("tcp", "ws") or not parts.hostname:
        raise AddressError(
            f"not an address: {text!r} (unix:PATH, tcp://127.0.0.1:PORT or ws://127.0.0.1:PORT)"
        )
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        raise AddressError(f"{text!r} needs a port (0: any free one)")
    if parts.path not in ("", "/"):
        raise AddressError(f"{text!r}: a path is not part of a listening address")
    scheme: Scheme = "tcp" if parts.scheme == "tcp" else "ws"
    return Address(scheme, host=parts.hostname, port=port)


def default_address(environ: Mapping[str, str]) -> Address:
    """One resident server per data dir (`AGENTLS_HOME`), so separate homes never meet."""
    home = environ.get("AGENTLS_HOME", "")
    key = hashlib.sha256(home.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return parse(f"unix:{runtime_dir(environ) / f'{key}.sock'}")


def read_token(path: str | Path) -> str:
    """The token in `path`, refused when others may read the file or it is empty."""
    file = Path(path).expanduser()
    try:
        mode = file.stat().st_mode
        token = file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise AddressError(f"cannot read the token file {file}: {exc.strerror}") from None
    if os.name == "posix" and mode & 0o077:
        raise AddressError(
            f"the token file {file} is readable by others (mode {mode & 0o777:o}); chmod 600 it"
        )
    if not token:
        raise AddressError(f"the token file {file} is empty")
    return token

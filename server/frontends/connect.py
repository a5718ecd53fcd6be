"""`agentls serve --connect [ADDRESS]`: a stdio <-> socket bridge to a resident server.

An editor spawns it exactly as it spawns `agentls serve`. It sends `connection/attach` with
this process's environment, working directory and serve flags, then copies bytes both ways.
When nothing listens at a Unix address it starts a resident server there (one at a time: a
lock file), detached, with the environment's secrets left out: each connection brings its own.

Standard library only, and nothing heavy: it must start in a few tens of milliseconds.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from server.frontends.address import Address, AddressError, default_address, parse, read_token
from server.redact import SECRET_NAME

START_WAIT_S = 60.0
RESIDENT_IDLE_S = 600.0
OWN_FLAGS = ("--connect", "--token-file")


class BridgeError(Exception):
    """Why the bridge cannot reach a server, said in words."""


def main(argv: list[str]) -> int:
    try:
        target, token_file, rest = split_flags(argv)
        address = parse(target) if target else default_address(os.environ)
        token = read_token(token_file) if token_file else None
        sock = reach(address, autostart=address.scheme == "unix")
        early = attach(sock, token=token, argv=rest)
    except (AddressError, BridgeError, OSError) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 1
    write_all(early)
    return pump(sock)


def split_flags(argv: list[str]) -> tuple[str, str | None, list[str]]:
    """(address, token file, the flags meant for the connection's sessions)."""
    target, token_file, rest = "", None, []
    items = iter(argv)
    for arg in items:
        name, eq, value = arg.partition("=")
        if name not in OWN_FLAGS:
            rest.append(arg)
            continue
        if not eq:
            following = next(items, None)
            if name == "--connect" and following is not None and not looks_like_address(following):
                rest.append(following)  # `--connect` without an address: a flag or a prompt
                following = None
            value = following or ""
        if name == "--connect":
            target = value
        else:
            token_file = value
    return target, token_file, rest


def looks_like_address(text: str) -> bool:
    return text.startswith(("unix:", "tcp://", "ws://"))


# -- reaching a server -------------------------------------------------------------------------


def reach(address: Address, *, autostart: bool) -> socket.socket:
    if address.scheme == "ws":
        raise BridgeError(
            "the bridge connects with unix:PATH or tcp://HOST:PORT; ws:// is for WebSocket clients"
        )
    try:
        return open_socket(address)
    except (FileNotFoundError, ConnectionRefusedError):
        if not autostart:
            raise BridgeError(f"no agentls server listens on {address}") from None
    return start_resident(address)


def open_socket(address: Address) -> socket.socket:
    if address.scheme == "tcp":
        return socket.create_connection((address.host, address.port), timeout=30)
    assert address.path is not None
    check_socket(address.path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(address.path))
    except OSError:
        sock.close()
        raise
    return sock


def check_socket(path: Path) -> None:
    """Only a socket this user owns, that nobody else may open, is trusted with the keys."""
    st = path.lstat()  # FileNotFoundError: nothing there yet
    if not stat.S_ISSOCK(st.st_mode):
        raise BridgeError(f"{path} is not a socket")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise BridgeError(f"the socket {path} belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o077:
        raise BridgeError(
            f"the socket {path} is open to others (mode {st.st_mode & 0o777:o}, not 600): "
            "refusing to send it this environment"
        )


def start_resident(address: Address) -> socket.socket:
    """Start a resident server at `address` unless another bridge just did."""
    import fcntl

    assert address.path is not None
    address.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(f"{address.path}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return open_socket(address)  # the bridge that held the lock started one
        except (FileNotFoundError, ConnectionRefusedError):
            pass
        child = spawn_resident(address)
        deadline = time.monotonic() + START_WAIT_S
        while True:
            try:
                return open_socket(address)
            except (FileNotFoundError, ConnectionRefusedError):
                pass
            if child.poll() is not None:
                raise BridgeError(
                    f"the resident server exited at start ({child.returncode}); "
                    f"see {log_path(address)}"
                )
            if time.monotonic() > deadline:
                raise BridgeError(f"the resident server did not listen on {address} in time")
            time.sleep(0.02)


def spawn_resident(address: Address) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    command = [sys.executable, "-m", "server.cli", "serve", "--listen", str(address)]
    command += ["--idle-timeout", str(RESIDENT_IDLE_S)]
    with open(log_path(address), "ab") as log:
        return subprocess.Popen(
            command,
            env=env,
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # outlives this bridge and its editor's process group
        )


def log_path(address: Address) -> Path:
    assert address.path is not None
    return address.path.with_suffix(".log")


# -- the conversation --------------------------------------------------------------------------


def attach(
    sock: socket.socket, *, token: str | None, argv: list[str], door: str = "serve"
) -> bytes:
    """Send `connection/attach`; returns what the server sent after its answer."""
    params: dict[str, Any] = {"env": dict(os.environ), "cwd": os.getcwd(), "argv": argv}
    if door != "serve":
        params["door"] = door
    if token is not None:
        params["token"] = token
    message = {"jsonrpc": "2.0", "id": "attach", "method": "connection/attach", "params": params}
    body = json.dumps(message).encode("utf-8")
    sock.settimeout(START_WAIT_S)
    sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    answer, early = read_frame(sock)
    sock.settimeout(None)
    if "error" in answer:
        error = answer["error"]
        raise BridgeError(f"the server refused this connection: {error.get('message')}")
    return early


def read_frame(sock: socket.socket) -> tuple[dict[str, Any], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise BridgeError("the server closed the connection")
        data += chunk
    header, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in header.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            raise BridgeError("the server closed the connection")
        body += chunk
    return json.loads(body[:length]), body[length:]


def pump(sock: socket.socket) -> int:
    """Copy stdin to the socket (its end half-closes the socket) and the socket to stdout,
    until the server closes the connection."""

    def upstream() -> None:
        try:
            while chunk := os.read(0, 65536):
                sock.sendall(chunk)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            return

    threading.Thread(target=upstream, daemon=True).start()
    try:
        while chunk := sock.recv(65536):
            write_all(chunk)
    except OSError:
        return 1
    return 0


def write_all(data: bytes, *, fd: int = 1) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# -- one print / stream-json run ---------------------------------------------------------------


def main_print(argv: list[str], target: str) -> int:
    """`agentls -p ... --connect [ADDRESS]`: the run happens on the resident server; this
    process carries its stdin, stdout, stderr, signals and exit code."""
    from server.frontends import mux

    try:
        address_text, token_file, rest = split_flags(argv)
        address_text = address_text or target
        address = parse(address_text) if address_text else default_address(os.environ)
        token = read_token(token_file) if token_file else None
        sock = reach(address, autostart=address.scheme == "unix")
        early = attach(sock, token=token, argv=rest, door="print")
    except (AddressError, BridgeError, OSError) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 1
    sending = threading.Lock()

    def send(frame: bytes) -> None:
        with sending:
            sock.sendall(frame)

    def forward(signum: int, _frame: Any) -> None:
        try:
            send(mux.pack_int(mux.SIGNAL, signum))
        except OSError:
            pass

    import signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), forward)

    def upstream() -> None:
        try:
            while chunk := os.read(0, 65536):
                send(mux.pack(mux.STDIN, chunk))
            send(mux.pack(mux.STDIN))
        except OSError:
            return

    threading.Thread(target=upstream, daemon=True).start()
    frames = mux.Unpacker()
    data = early
    while True:
        for channel, payload in frames.feed(data):
            if channel == mux.STDOUT:
                write_all(payload)
            elif channel == mux.STDERR:
                write_all(payload, fd=2)
            elif channel == mux.EXIT:
                return mux.as_int(payload)
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            print("agentls: the resident server closed the connection", file=sys.stderr)
            return 1

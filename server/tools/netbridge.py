"""Runs inside a sandbox without a network: the way out to agentls's host proxy.

    python -I -S netbridge.py SOCKET -- COMMAND...

Listens on 127.0.0.1 inside the sandbox's own network namespace, relays every connection to
the proxy's unix socket (bound into the sandbox), and runs COMMAND with the proxy variables
pointing at that port; exits as COMMAND does. Only the standard library: it starts with `-S`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

PROXY_VARIABLES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")
NO_PROXY_VARIABLES = ("no_proxy", "NO_PROXY")


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy `a` to `b` until `a` ends, then end `b`'s sending side (the host proxy uses it too)."""
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
    back.start()
    pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: netbridge.py SOCKET -- COMMAND...", file=sys.stderr)
        return 2
    path, command = argv[0], argv[2:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    env = dict(os.environ)
    env.update({name: url for name in PROXY_VARIABLES})
    for name in NO_PROXY_VARIABLES:
        env.pop(name, None)
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    try:
        proc = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"{command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    code = proc.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))

"""Runs inside a sandbox without a network: the way out to agentls's host proxy.

    python -I -S netbridge.py SOCKET --seccomp HEX -- COMMAND...

Listens on 127.0.0.1 inside the sandbox's own network namespace, relays every connection to
the proxy's unix socket, and runs COMMAND with the proxy variables pointing at that port;
exits as COMMAND does. The bridge needs Unix sockets, so the sandbox's seccomp filter (HEX, a
`struct sock_filter[]`) is loaded in COMMAND's process alone, and the bridge makes itself
undumpable so that COMMAND cannot take its sockets (ptrace, `pidfd_getfd`, /proc/PID/fd).
Only the standard library: it starts with `-S`.
"""

from __future__ import annotations

import ctypes
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


PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def filter_loader(program: bytes):
    """A function that loads `program` into the calling process (for `preexec_fn`: everything
    it needs is made here, before the fork)."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _Filter(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))

    def load() -> None:
        if prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            os._exit(126)
        if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
            os._exit(126)

    load.keep = (code, fprog)  # type: ignore[attr-defined]
    return load


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[1] != "--seccomp" or argv[3] != "--":
        print("usage: netbridge.py SOCKET --seccomp HEX -- COMMAND...", file=sys.stderr)
        return 2
    path, program, command = argv[0], bytes.fromhex(argv[2]), argv[4:]
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    env = dict(os.environ)
    env.update({name: url for name in PROXY_VARIABLES})
    for name in NO_PROXY_VARIABLES:
        env.pop(name, None)
    try:  # before the relay's thread starts: a fork with one thread only
        proc = subprocess.Popen(command, env=env, preexec_fn=filter_loader(program))
    except OSError as exc:
        print(f"{command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    code = proc.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))

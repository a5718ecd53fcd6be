"""A resident server: `agentls serve --listen ADDRESS`, many clients, each connection its own
session service (sessions, environment, interactions).

A connection opens with `connection/attach` (the token on TCP; the environment and serve flags
the client's sessions use). On a Unix socket and on a WebSocket whose upgrade carried the token,
the first message may be anything else: the connection then uses the server's environment.
A connection that fails auth gets `Unauthorized` before any method runs, and is closed.
Who a connection acts for and what it may not change: `server.frontends.principals`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
import struct
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from http import HTTPStatus
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from protocol import errors
from protocol.methods import AttachParams, AttachResult
from server import __version__, redact
from server.frontends.address import Address, AddressError
from server.frontends.envelope import error_reply
from server.frontends.jsonrpc import AgentlsServer
from server.frontends.jsonrpc_transport import CoalescingWriter
from server.frontends.lsp_frames import BadFrame, read_frames
from server.frontends.principals import (
    PRE_AUTH_BYTES,
    PRE_AUTH_S,
    AttachPolicy,
    Principal,
    Refused,
    gate,
)
from server.frontends.print_door import PrintDoor, serve_print
from server.frontends.stdio import cancel_on_signals, parse_json

log = logging.getLogger(__name__)

ATTACH = "connection/attach"
NO_PRINT = "a print run needs a Unix socket or TCP connection (`agentls -p --connect`)"
ServiceFor = Callable[[AttachParams], Callable[[Any], Any]]
"""What a connection attached with -> the service factory of its `AgentlsServer`."""


class Out(Protocol):
    def write(self, data: bytes) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class SocketOut:
    """What `CoalescingWriter` writes to: an asyncio stream (it buffers; no flush needed)."""

    def __init__(self, writer: asyncio.StreamWriter):
        self._writer = writer

    def write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    def flush(self) -> None:
        return None

    def close(self) -> None:
        self._writer.close()

    async def linger(self, reader: asyncio.StreamReader, *, limit: int, seconds: float) -> None:
        """Half-close after an answer, and read (and drop) what the peer still sends, up to
        `limit` bytes or `seconds`: closing with its bytes unread would reset the connection,
        and the peer could lose the answer."""
        with contextlib.suppress(Exception):
            await self._writer.drain()
            self._writer.write_eof()
            async with asyncio.timeout(seconds):
                while limit > 0 and (chunk := await reader.read(65536)):
                    limit -= len(chunk)


class WebSocketOut:
    """One JSON-RPC message per text frame, sent in order."""

    def __init__(self, ws: Any):
        self._ws = ws
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._sender = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while (text := await self._queue.get()) is not None:
            try:
                await self._ws.send(text)
            except Exception:  # the peer went away: the reader side ends the connection
                return

    def write(self, data: bytes) -> None:
        self._queue.put_nowait(data.decode("utf-8"))

    def flush(self) -> None:
        return None

    def close(self) -> None:
        self._queue.put_nowait(None)

    async def drained(self) -> None:
        self.close()
        await self._sender


def lsp_frame(message: dict[str, Any]) -> bytes:
    import json

    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Resident:
    """Serves connections until stopped, or until it has had none for `idle_timeout` seconds."""

    def __init__(
        self,
        service_for: ServiceFor,
        *,
        policy: AttachPolicy,
        idle_timeout: float | None,
        print_door: PrintDoor | None = None,
    ):
        self.service_for = service_for
        self.print_door = print_door
        self.policy = policy
        self.idle_timeout = idle_timeout
        self.stopped = asyncio.Event()
        self._connections: set[asyncio.Task] = set()
        self._idle: asyncio.TimerHandle | None = None
        self._count = 0

    # -- lifetime ----------------------------------------------------------------------------

    def _opened(self) -> None:
        self._count += 1
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _closed(self) -> None:
        self._count -= 1
        if self._count == 0:
            self.arm_idle()

    def arm_idle(self) -> None:
        if self.idle_timeout:
            self._idle = asyncio.get_running_loop().call_later(self.idle_timeout, self._idle_end)

    def _idle_end(self) -> None:
        if self._count == 0:
            log.info("no connection for %ss: the resident server stops", self.idle_timeout)
            self.stopped.set()

    async def close(self) -> None:
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)

    # -- connections -------------------------------------------------------------------------

    async def on_stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, needs_token: bool
    ) -> None:
        refusal = peer_refusal(writer)
        if refusal is not None:
            log.warning("refused a Unix socket connection: %s", refusal)
            reply = error_reply(None, errors.UNAUTHORIZED, f"connection refused: {refusal}")
            writer.write(lsp_frame(reply))
            with contextlib.suppress(ConnectionError, OSError):
                await writer.drain()
            writer.close()
            return
        budget = PreAuth(PRE_AUTH_BYTES if needs_token else None)

        async def next_chunk() -> bytes:
            try:
                return budget.take(await reader.read(65536))
            except (ConnectionError, OSError):
                return b""

        out = SocketOut(writer)
        await self._serve(
            read_frames(next_chunk),
            out,
            needs_token=needs_token,
            include_headers=True,
            reader=reader,
            budget=budget,
        )

    async def on_websocket(self, ws: Any) -> None:
        principal = getattr(ws, "agentls_principal", None)
        if not isinstance(principal, Principal):
            await ws.close()
            return

        async def frames() -> AsyncIterator[Any]:
            try:
                async for message in ws:
                    try:
                        yield parse_json(message)
                    except ValueError as exc:
                        yield BadFrame(f"parse error: {exc}")
            except Exception:  # a dropped WebSocket ends the connection like EOF
                return

        out = WebSocketOut(ws)
        try:
            await self._serve(
                frames(), out, needs_token=False, include_headers=False, principal=principal
            )
        finally:
            await out.drained()

    async def _serve(
        self,
        frames: AsyncIterator[Any],
        out: Out,
        *,
        needs_token: bool,
        include_headers: bool,
        reader: asyncio.StreamReader | None = None,
        budget: PreAuth | None = None,
        principal: Principal | None = None,
    ) -> None:
        """`reader`: the raw input under `frames`, which a print run takes over. `budget`: what
        the peer may send before it is authenticated. `principal`: who the peer is already
        (a WebSocket's upgrade carried the token)."""
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        self._opened()
        writer = CoalescingWriter(out) if include_headers else out  # type: ignore[arg-type]

        def send(message: dict[str, Any]) -> None:
            writer.write(lsp_frame(message) if include_headers else _json(message))

        held: list[str] = []
        try:
            try:
                wait = PRE_AUTH_S if needs_token else None
                first = await asyncio.wait_for(anext(aiter(frames), None), wait)
            except TimeoutError:
                send(error_reply(None, errors.UNAUTHORIZED, TOO_SLOW))
                return
            if budget is not None and budget.over:
                send(error_reply(None, errors.UNAUTHORIZED, TOO_BIG))
                if isinstance(writer, CoalescingWriter):
                    writer.flush()
                if isinstance(out, SocketOut) and reader is not None:
                    await out.linger(reader, limit=16 * PRE_AUTH_BYTES, seconds=PRE_AUTH_S / 5)
                return
            if first is None:
                return
            attached = self._attach(first, needs_token, principal)
            if isinstance(attached, dict):
                send(attached)
                return
            params, pending, principal = attached
            owner = principal.owner
            if budget is not None:
                budget.lift()
            held = redact.hold(params.env or {})
            if params.door == "print":
                if reader is None or self.print_door is None:
                    send(error_reply(first.get("id"), errors.INVALID_PARAMS, NO_PRINT))
                    return
                send(_result(first, AttachResult(version=__version__, pid=os.getpid())))
                await serve_print(self.print_door, params, reader, writer)
                return
            try:
                server = AgentlsServer(self.service_for(params))
            except ValueError as exc:  # unusable serve flags
                send(error_reply(first.get("id"), errors.INVALID_PARAMS, f"argv: {exc}"))
                return
            server.protocol.set_writer(writer, include_headers=include_headers)
            if pending is None:
                send(_result(first, AttachResult(version=__version__, pid=os.getpid())))
            with contextlib.suppress(SystemExit):  # `exit` ends this connection only
                gated = self._gated(
                    _chained([pending] if pending else [], frames), send, owner=owner
                )
                await server.serve_frames(gated)
        except Exception:
            log.exception("a connection failed")
        finally:
            redact.release(held)
            if isinstance(writer, CoalescingWriter):
                writer.flush()
            out.close()
            self._closed()
            if task is not None:
                self._connections.discard(task)

    def _attach(
        self, first: Any, needs_token: bool, principal: Principal | None
    ) -> dict[str, Any] | tuple[AttachParams, Any, Principal]:
        """(what the connection attached with, as its sessions get it; the first frame when it
        was not an attach; who it is) or the error answer that ends the connection."""
        principal = principal or (None if needs_token else self.policy.principals.owner)
        msg_id = first.get("id") if isinstance(first, dict) else None
        if not (isinstance(first, dict) and first.get("method") == ATTACH and "id" in first):
            if principal is None:
                return error_reply(
                    msg_id,
                    errors.UNAUTHORIZED,
                    f"this server needs a token: send `{ATTACH}` with it first",
                )
            params, pending = AttachParams(), first
        else:
            try:
                params = AttachParams.model_validate(first.get("params") or {})
            except ValidationError as exc:
                return error_reply(msg_id, errors.INVALID_PARAMS, f"invalid params: {exc}")
            if needs_token:
                principal = self.policy.principals.for_token(params.token)
            if principal is None:
                return error_reply(msg_id, errors.UNAUTHORIZED, "wrong or missing token")
            pending = None
        try:
            return self.policy.settle(principal, params), pending, principal
        except Refused as exc:
            log.warning("refused a connection of %s: %s", principal.name, exc)
            return error_reply(msg_id, errors.UNAUTHORIZED, f"connection refused: {exc}")

    def _gated(
        self, frames: AsyncIterator[Any], send: Callable[[dict], None], *, owner: bool
    ) -> AsyncIterator:
        """`frames` without the session requests that would go below the owner's floor (each
        answered with why)."""

        async def gated() -> AsyncIterator[Any]:
            async for frame in frames:
                reason = gate(frame, self.policy.floor, owner=owner)
                if reason is None:
                    yield frame
                elif "id" in frame:
                    send(error_reply(frame["id"], errors.INVALID_PARAMS, reason))

        return gated()


def _chained(first: Iterable[Any], rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async def chained() -> AsyncIterator[Any]:
        for item in first:
            yield item
        async for item in rest:
            yield item

    return chained()


def _json(message: dict[str, Any]) -> bytes:
    import json

    return json.dumps(message).encode("utf-8")


def _result(request: dict[str, Any], result: AttachResult) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result.to_wire()}


class PreAuth:
    """Bytes a peer may send before it is authenticated (None: no limit)."""

    def __init__(self, limit: int | None):
        self.left = limit
        self.over = False

    def take(self, chunk: bytes) -> bytes:
        if self.left is None:
            return chunk
        self.left -= len(chunk)
        if self.left < 0:
            self.over = True
            return b""  # reads as the end of the input: the frame reader stops
        return chunk

    def lift(self) -> None:
        self.left = None


TOO_BIG = f"the first message is over the {PRE_AUTH_BYTES // 1024} KB allowed before authentication"
TOO_SLOW = f"no `{ATTACH}` came in time ({PRE_AUTH_S:g} s)"
NAMESPACES = ("mnt", "user", "pid")


def peer_refusal(writer: asyncio.StreamWriter) -> str | None:
    """Why a Unix socket peer is refused: it must be this user (Linux: SO_PEERCRED) in this
    server's mount, user and pid namespaces (a sandboxed command is in others); TCP peers show
    a token."""
    sock = writer.get_extra_info("socket")
    if sock is None or sock.family != getattr(socket, "AF_UNIX", None):
        return None
    if not hasattr(socket, "SO_PEERCRED"):
        return None  # the socket's 0600 mode is the guard there
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    if uid != os.getuid():
        return "the peer is another user"
    return foreign_namespace(pid)


def foreign_namespace(pid: int) -> str | None:
    if not Path("/proc/self/ns").is_dir():
        return None
    if pid <= 0:
        return "the peer is in another pid namespace"
    for name in NAMESPACES:
        try:
            theirs = os.readlink(f"/proc/{pid}/ns/{name}")
        except OSError:
            return f"the peer's {name} namespace cannot be read"
        if theirs != os.readlink(f"/proc/self/ns/{name}"):
            return f"the peer is in another {name} namespace (a sandbox or container)"
    return None


# -- listening ---------------------------------------------------------------------------------


def check_address(address: Address, policy: AttachPolicy) -> None:
    if address.needs_token and not policy.principals.any_token:
        where = "a non-loopback address" if not address.loopback else str(address)
        raise AddressError(
            f"listening on {where} needs a token: --token-file FILE "
            "(any local user can reach a TCP port; only a Unix socket is private)"
        )


def prepare_socket_path(path: Path, *, private_dir: bool) -> None:
    """Create the socket's directory (0700 when it is ours), clear a stale socket, refuse a
    live one or a path that is not a socket."""
    parent = path.parent
    if private_dir:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = parent.stat()
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise AddressError(
                f"{parent} must be a directory only you can use (yours, mode 700); it is "
                f"mode {st.st_mode & 0o777:o}"
            )
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise AddressError(f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink(missing_ok=True)  # nobody listens there: a server that died
        return
    finally:
        probe.close()
    raise AddressError(f"a server is already listening on unix:{path}")


async def listen(resident: Resident, address: Address, *, private_dir: bool = False) -> Any:
    """Start listening; returns the server object (closed by the caller)."""
    if address.scheme == "unix":
        assert address.path is not None
        prepare_socket_path(address.path, private_dir=private_dir)
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(
                lambda r, w: resident.on_stream(r, w, needs_token=False), path=str(address.path)
            )
        finally:
            os.umask(old)
        os.chmod(address.path, 0o600)
        return server
    if address.scheme == "tcp":
        return await asyncio.start_server(
            lambda r, w: resident.on_stream(r, w, needs_token=True),
            host=address.host,
            port=address.port,
        )
    from websockets.asyncio.server import serve

    def authorize(connection: Any, request: Any) -> Any:
        given = request.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        principal = resident.policy.principals.for_token(value.strip())
        if scheme.lower() == "bearer" and principal is not None:
            connection.agentls_principal = principal
            return None
        return connection.respond(
            HTTPStatus.UNAUTHORIZED, "a token is required: Authorization: Bearer <token>\n"
        )

    return await serve(
        resident.on_websocket,
        address.host,
        address.port,
        process_request=authorize,
        max_size=64 * 1024 * 1024,
    )


async def serve_resident(resident: Resident, address: Address, *, private_dir: bool) -> None:
    server = await listen(resident, address, private_dir=private_dir)
    print(f"agentls: listening on {bound(address, server)}", file=sys.stderr, flush=True)
    resident.arm_idle()
    try:
        await resident.stopped.wait()
    finally:
        server.close()
        await resident.close()
        if address.scheme == "unix" and address.path is not None:
            with contextlib.suppress(OSError):
                address.path.unlink()


def bound(address: Address, server: Any) -> Address:
    """`address` with the port the system chose for port 0."""
    if address.scheme == "unix" or address.port:
        return address
    port = server.sockets[0].getsockname()[1]
    return Address(address.scheme, host=address.host, port=port)


def run_listen(
    address: Address,
    service_for: ServiceFor,
    *,
    policy: AttachPolicy,
    idle_timeout: float | None,
    private_dir: bool,
    print_door: PrintDoor | None = None,
) -> int:
    """Serve until a signal (running turns end `aborted`, stored) or the idle timeout."""
    try:
        check_address(address, policy)
    except AddressError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 1
    received: list[int] = []

    async def main() -> None:
        cancel_on_signals(asyncio.current_task(), received)
        resident = Resident(
            service_for, policy=policy, idle_timeout=idle_timeout, print_door=print_door
        )
        await serve_resident(resident, address, private_dir=private_dir)

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        if not received:
            raise
    except KeyboardInterrupt:
        return 130
    except (AddressError, OSError) as exc:
        print(f"agentls: cannot listen on {address}: {exc}", file=sys.stderr)
        return 1
    return 128 + received[0] if received else 0

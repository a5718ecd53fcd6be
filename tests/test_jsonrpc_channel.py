"""The native door's event frames: encoded by the channel, byte for byte what pygls writes."""

from __future__ import annotations

import io

from pygls.lsp.server import LanguageServer

from protocol.methods import SessionUpdateParams
from protocol.updates import AgentMessageChunk
from server.frontends.jsonrpc_bridge import AgentlsServerProtocol, make_converter
from server.frontends.jsonrpc_channel import JsonRpcChannel
from server.frontends.jsonrpc_transport import CoalescingWriter


def protocol() -> tuple[AgentlsServerProtocol, io.BytesIO]:
    server = LanguageServer(
        "t", "0", protocol_cls=AgentlsServerProtocol, converter_factory=make_converter
    )
    out = io.BytesIO()
    proto = server.protocol
    assert isinstance(proto, AgentlsServerProtocol)
    proto.set_writer(CoalescingWriter(out))
    return proto, out


def test_an_update_frame_is_what_pygls_would_write() -> None:
    update = AgentMessageChunk(text='h\u00e9llo "w"\n')
    params = SessionUpdateParams(session_id="s1", turn_id="t1", seq=7, update=update)
    ours, our_out = protocol()
    theirs, their_out = protocol()

    JsonRpcChannel(ours).send_update(params)
    theirs._send_data({"jsonrpc": "2.0", "method": "session/update", "params": params.to_wire()})

    assert our_out.getvalue() == their_out.getvalue()
    assert our_out.getvalue().startswith(b"Content-Length: ")

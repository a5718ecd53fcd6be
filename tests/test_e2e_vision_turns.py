"""An image turn, then text turns, over JSON-RPC (real stdio, the loopback fake model): the
vision model takes the image turn only; the user's own model comes back with the next turn and
sees earlier images as a short note."""

from __future__ import annotations

import struct
import zlib

from server.testing.fake_llm import Reply
from tests.agent_client import open_session, prompt


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def texts(body: dict) -> str:
    out = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(out)


async def test_the_vision_model_takes_the_image_turn_only(tmp_path, workspace, fake_llm):
    (workspace / "shot.png").write_bytes(png(64, 48))
    fake_llm.script(Reply(text="A black square."), Reply(text="You are welcome."))
    client, session_id = await open_session(tmp_path, workspace, fake_llm)
    try:
        # the user's own model, chosen in the picker: a text-only one
        await client.call("session/set_model", {"sessionId": session_id, "modelId": "o3-mini"})
        first = await client.call("session/prompt", prompt(session_id, "describe shot.png"))
        second = await client.call("session/prompt", prompt(session_id, "thanks"))
    finally:
        await client.close()
    assert (first["terminal"], second["terminal"]) == ("completed", "completed")
    image_call, text_call = (r.body for r in fake_llm.requests)
    assert image_call["model"] == "gpt-5.5" and "image_url" in str(image_call)
    assert text_call["model"] == "o3-mini"
    assert "image_url" not in str(text_call)
    assert "[image shot.png, 64x48, seen by gpt-5.5]" in texts(text_call), texts(text_call)
    switches = [
        (u["update"]["model"], u["update"]["reason"])
        for u in client.updates
        if u["update"]["kind"] == "model_switched"
    ]
    assert [m for m, _ in switches][-2:] == ["gpt-5.5", "o3-mini"], switches

"""The SSE reader the SDK-backed providers parse streamed bodies with."""

from __future__ import annotations

from collections.abc import AsyncIterator

from server.providers import sse


def decode(*chunks: bytes) -> list[sse.Event]:
    decoder = sse.Decoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.finish()


def test_events_with_and_without_names() -> None:
    body = b'event: message_start\ndata: {"a": 1}\n\ndata: [DONE]\n\n'

    assert decode(body) == [("message_start", '{"a": 1}'), (None, "[DONE]")]


def test_any_split_of_the_bytes_gives_the_same_events() -> None:
    body = 'event: e\r\ndata: {"t": "h\u00e9llo"}\r\n\r\ndata: x\rdata: y\r\r: ping\n\n'.encode()
    whole = decode(body)

    assert whole == [("e", '{"t": "h\u00e9llo"}'), (None, "x\ny")]
    for cut in range(1, len(body)):
        assert decode(body[:cut], body[cut:]) == whole, cut
    assert decode(*[body[i : i + 1] for i in range(len(body))]) == whole


def test_comments_ids_retries_and_empty_events_are_skipped() -> None:
    body = b": keep-alive\n\nid: 7\nretry: 100\n\nevent: ping\n\ndata:no-space\nunknown: z\n\n"

    assert decode(body) == [(None, "no-space")]


def test_a_last_event_without_its_blank_line_still_counts() -> None:
    assert decode(b"event: done\ndata: 1") == [("done", "1")]
    assert decode(b"data: 1\r") == [(None, "1")]


async def test_batches_are_one_list_per_chunk_that_completes_events() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for chunk in (b"data: 1\n\ndata: 2\n\n", b"data: ", b"3\n\n", b"data: 4"):
            yield chunk

    got = [batch async for batch in sse.batches(chunks())]

    assert got == [[(None, "1"), (None, "2")], [(None, "3")], [(None, "4")]]

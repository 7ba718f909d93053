"""A watch over kcm's lean HTTP/1.1 pool: the stream takes each read's chunks unjoined
(``LeanStream.read_pieces``) and a chunk that is exactly one line is that line, so the lines
must come out right however the server chunks them."""

from __future__ import annotations

import json

import httpx
import pytest

from kcm.client import ApiClient, ClientConfig
from kcm.client._lean_http import LeanStream
from kcm.client._watch import WatchStream
from kcm.clock import SYSTEM_CLOCK
from kcm.errors import ResourceExpired, WatchDecodeError
from kcm.models import Pod, WatchEvent, decoder

from .test_client_lean_http import CHUNKED_HEAD, Reply, chunk, open_stream, pooled, serving
from .test_client_watch import GONE, event

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the lean pool is aiohttp's fast path: asyncio only


def watch_reply(*chunks: bytes) -> Reply:
    """Answer with ``chunks`` as the chunked body, all in one write, then end the body."""
    body = CHUNKED_HEAD + b"".join(map(chunk, chunks)) + b"0\r\n\r\n"
    return lambda head: [body]


async def watch_all(port: int) -> list[WatchEvent[Pod]]:
    events: list[WatchEvent[Pod]] = []
    config = ClientConfig(server=f"http://127.0.0.1:{port}", qps=-1)
    async with (
        ApiClient(config) as client,
        client.api(Pod, namespace="ns").watch(resource_version="1") as stream,
    ):
        assert isinstance(stream, WatchStream)
        assert stream._pieces is not None  # reading the lean stream's pieces
        async for ev in stream:
            events.append(ev)
    return events


async def test_lines_come_out_right_however_the_server_chunks_them() -> None:
    a, b, c, d, e = (event("MODIFIED", "p", str(rv)) for rv in range(2, 7))
    chunks = [
        a,  # one chunk per event, as kube-apiserver sends them
        b + c,  # two events in one chunk
        d[:7],  # one event over three chunks
        d[7:30],
        d[30:],
        b"\n",  # an empty line is skipped
        e[:-1] + b"\r\n",  # a CRLF line end
    ]
    async with serving(watch_reply(*chunks)) as server:
        events = await watch_all(server.port)
    assert [ev.object.metadata.resource_version for ev in events] == ["2", "3", "4", "5", "6"]


async def test_a_line_left_unfinished_at_the_end_of_the_body_is_decoded() -> None:
    whole = event("ADDED", "p", "2")
    async with serving(watch_reply(whole[:20], whole[20:-1])) as server:  # no final newline
        events = await watch_all(server.port)
    assert [ev.object.metadata.name for ev in events] == ["p"]


async def test_a_malformed_one_line_chunk_raises_with_the_line_without_its_newline() -> None:
    bad = b'{"type": "ADDED", "object": {"kind": "Pod", "metadata": '
    async with serving(watch_reply(event("ADDED"), bad + b"\n", event("ADDED", "q"))) as server:
        with pytest.raises(WatchDecodeError) as info:
            await watch_all(server.port)
    assert info.value.line == bad


async def test_an_error_event_in_its_own_chunk_is_the_typed_error() -> None:
    async with serving(watch_reply(event("ADDED"), GONE)) as server:
        with pytest.raises(ResourceExpired, match="too old"):
            await watch_all(server.port)


def test_a_one_line_piece_is_passed_on_as_is() -> None:
    stream = WatchStream.__new__(WatchStream)  # only the line splitting, no response
    stream._rest = b""
    one, two = b'{"a":1}\n', b'{"b":2}\n'
    lines = stream._split([one, two])
    assert lines == [one, two]
    assert lines[0] is one  # not a copy: the decoder reads the chunk itself
    assert stream._split([b'{"c"', b":3}\n{", b'"d":4}\n']) == [b'{"c":3}', b'{"d":4}']


async def test_read_pieces_hands_over_a_reads_chunks_then_the_framing_error_after_them() -> None:
    body = CHUNKED_HEAD + chunk(b'{"a":1}\n') + chunk(b'{"b":2}\n') + b"2\r\nabXY"
    async with serving(lambda head: [body]) as server, pooled(server) as pool:
        response = await open_stream(pool, server)
        stream = response.stream
        assert isinstance(stream, LeanStream)
        pieces = await stream.read_pieces()
        assert pieces == [b'{"a":1}\n', b'{"b":2}\n']  # unjoined, and not lost to the error
        with pytest.raises(httpx.RemoteProtocolError):
            await stream.read_pieces()
        await response.aclose()
        assert pool.idle_connections == 0


async def test_a_stream_with_chunk_extensions_is_read() -> None:
    data = json.dumps({"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "x"}}})
    raw = data.encode() + b"\n"
    body = CHUNKED_HEAD + b"%x;name=value\r\n%s\r\n0\r\n\r\n" % (len(raw), raw)
    async with serving(lambda head: [body]) as server:
        events = await watch_all(server.port)
    assert [ev.object.metadata.name for ev in events] == ["x"]


class _PiecesOnly(httpx.AsyncByteStream):
    """Any stream with ``read_pieces`` (not kcm's LeanStream): the watch reads through it."""

    def __init__(self, reads: list[list[bytes]]) -> None:
        self.reads = reads

    async def read_pieces(self) -> list[bytes] | None:
        return self.reads.pop(0) if self.reads else None

    async def __aiter__(self):  # type: ignore[override]
        raise AssertionError("the watch must read pieces, not iterate the stream")
        yield b""  # pragma: no cover


async def test_any_stream_with_read_pieces_is_read_by_pieces() -> None:
    a, b, c = (event("MODIFIED", "p", str(rv)) for rv in range(2, 5))
    body = _PiecesOnly([[a, b[:9]], [b[9:] + c]])
    response = httpx.Response(200, stream=body)
    stream = WatchStream(
        response,
        decoder(WatchEvent[Pod]).decode,
        server="test",
        clock=SYSTEM_CLOCK,
        idle_timeout=60.0,
        idle_timeout_by_transport=True,
    )
    versions = [ev.object.metadata.resource_version async for ev in stream]
    assert versions == ["2", "3", "4"]
    assert body.reads == []

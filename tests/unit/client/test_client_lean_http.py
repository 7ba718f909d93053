"""The aiohttp transport's fast path (kcm.client._lean_http): whole-body requests and streams
(watches) over a lean keep-alive pool. Each test scripts a raw HTTP/1.1 server on loopback, so
the framing cases a server may send (lengths, chunks split anywhere, no body, close) are exact
bytes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from kcm.client import ApiClient, ClientConfig
from kcm.client import _lean_http as lean_http
from kcm.client._lean_http import LeanPool, LeanStream
from kcm.client._transport import _LEAN_POOLS, AiohttpTransport

pytestmark = pytest.mark.anyio

Reply = Callable[[bytes], list[bytes | None]]  # request head -> pieces to write (None: close)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # aiohttp, and so its fast path, is asyncio-only


def ok(body: bytes, *extra: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    return (
        head
        + b"".join(e + b"\r\n" for e in extra)
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


class _Script(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.buf = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server.connections += 1
        self.server.open.append(transport)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, _, rest = self.buf.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            if len(rest) < length:
                return
            self.server.requests.append(head + b"\r\n\r\n" + rest[:length])
            self.buf = rest[length:]
            for piece in self.server.reply(head):
                if piece is None:
                    self.transport.close()
                    return
                self.transport.write(piece)


class Server:
    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.connections = 0
        self.requests: list[bytes] = []
        self.open: list[asyncio.Transport] = []
        self.port = 0


@asynccontextmanager
async def serving(reply: Reply) -> AsyncIterator[Server]:
    server = Server(reply)
    loop = asyncio.get_running_loop()
    listener = await loop.create_server(lambda: _Script(server), "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        for transport in server.open:
            transport.close()
        listener.close()
        await listener.wait_closed()


@asynccontextmanager
async def pooled(server: Server, limit: int = 10) -> AsyncIterator[LeanPool]:
    """A pool on ``server``, closed at the end (the test's sockets with it)."""
    pool = LeanPool(
        "127.0.0.1", server.port, ssl_context=None, server_hostname=None, limit=limit, keepalive=60
    )
    try:
        yield pool
    finally:
        pool.close()


async def send(
    pool: LeanPool, server: Server, method: str = "GET", body: bytes | None = None, read: float = 5
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    request = httpx.Request(method, f"http://127.0.0.1:{server.port}/api/v1/pods?limit=1")
    return await pool.send(request, body, connect=5, read=read)


async def test_keep_alive_answers_reuse_one_connection() -> None:
    async with serving(lambda head: [ok(b'{"a":1}')]) as server, pooled(server) as pool:
        for _ in range(3):
            status, headers, body = await send(pool, server)
            assert (status, body) == (200, b'{"a":1}')
            assert (b"Content-Type", b"application/json") in headers
        assert server.connections == 1
        assert server.requests[0].startswith(b"GET /api/v1/pods?limit=1 HTTP/1.1\r\n")
        assert b"\r\nHost: 127.0.0.1:" in server.requests[0]


async def test_a_body_is_sent_with_its_length() -> None:
    async with serving(lambda head: [ok(b"{}")]) as server, pooled(server) as pool:
        await send(pool, server, "POST", b'{"kind":"Pod"}')
        assert server.requests[0].endswith(b"Content-Length: 14\r\n\r\n" + b'{"kind":"Pod"}')


async def test_chunked_answers_split_anywhere_are_joined() -> None:
    answer = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    async with (
        serving(lambda head: [answer[i : i + 1] for i in range(len(answer))]) as server,
        pooled(server) as pool,
    ):
        for _ in range(2):
            status, _, body = await send(pool, server)
            assert (status, body) == (200, b"hello, world")
        assert server.connections == 1  # the trailers were consumed: the connection is clean


async def test_no_body_for_204_and_head_and_the_connection_stays() -> None:
    def reply(head: bytes) -> list[bytes | None]:
        if head.startswith(b"HEAD"):
            return [b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"]
        return [b"HTTP/1.1 204 No Content\r\n\r\n"]

    async with serving(reply) as server, pooled(server) as pool:
        assert (await send(pool, server, "DELETE"))[::2] == (204, b"")
        assert (await send(pool, server, "HEAD"))[::2] == (200, b"")
        assert (await send(pool, server, "DELETE"))[::2] == (204, b"")
        assert server.connections == 1


async def test_an_informational_answer_is_skipped() -> None:
    reply: Reply = lambda head: [b"HTTP/1.1 100 Continue\r\n\r\n", ok(b"{}")]  # noqa: E731
    async with serving(reply) as server, pooled(server) as pool:
        assert (await send(pool, server))[::2] == (200, b"{}")


async def test_connection_close_and_bodies_ended_by_close_are_not_reused() -> None:
    def reply(head: bytes) -> list[bytes | None]:
        if b"/close" in head:
            return [ok(b"1", b"Connection: close")]
        return [b"HTTP/1.1 200 OK\r\n\r\nuntil the end", None]

    async with serving(reply) as server, pooled(server) as pool:
        request = httpx.Request("GET", f"http://127.0.0.1:{server.port}/close")
        assert (await pool.send(request, None, connect=5, read=5))[2] == b"1"
        assert (await send(pool, server))[::2] == (200, b"until the end")
        assert (await send(pool, server))[::2] == (200, b"until the end")
        assert server.connections == 3
        assert pool.idle_connections == 0


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    async with serving(lambda head: [ok(b"{}")]) as server, pooled(server) as pool:
        await send(pool, server)
        server.open[0].close()  # the server's idle timeout
        for _ in range(100):  # let the client see the close (no timing: it is already sent)
            if pool._idle and pool._idle[0].closed:
                break
            await asyncio.sleep(0)
        assert (await send(pool, server))[0] == 200
        assert server.connections == 2


@pytest.mark.parametrize(
    ("pieces", "error"),
    [
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", None], httpx.ReadError),
        ([None], httpx.ReadError),
        ([b"SPDY/3 200 OK\r\n\r\n"], httpx.RemoteProtocolError),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"], httpx.RemoteProtocolError),
        ([b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n"], httpx.RemoteProtocolError),
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
            httpx.RemoteProtocolError,
        ),
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY"],
            httpx.RemoteProtocolError,
        ),
    ],
    ids=[
        "cut-short",
        "closed-at-once",
        "not-http",
        "bad-length",
        "bad-header",
        "bad-chunk-size",
        "bad-chunk-end",
    ],
)
async def test_broken_answers_raise_typed_errors_and_drop_the_connection(
    pieces: list[bytes | None], error: type[Exception]
) -> None:
    async with serving(lambda head: pieces) as server, pooled(server) as pool:
        with pytest.raises(error):
            await send(pool, server)
        assert pool.idle_connections == 0


async def test_no_answer_within_the_read_timeout_is_a_read_timeout() -> None:
    async with serving(lambda head: []) as server, pooled(server) as pool:  # never answers
        with pytest.raises(httpx.ReadTimeout):
            await send(pool, server, read=0.05)
        assert pool.idle_connections == 0  # an answer may still come: never reused


async def test_a_refused_connection_is_a_connect_error() -> None:
    async with serving(lambda head: []) as server:
        port = server.port
    pool = LeanPool(
        "127.0.0.1", port, ssl_context=None, server_hostname=None, limit=1, keepalive=60
    )
    request = httpx.Request("GET", f"http://127.0.0.1:{port}/")
    with pytest.raises(httpx.ConnectError, match=f"127.0.0.1:{port}"):
        await pool.send(request, None, connect=5, read=5)


async def test_the_limit_queues_requests_on_the_connections_it_allows() -> None:
    async with serving(lambda head: [ok(b"{}")]) as server, pooled(server, limit=1) as pool:
        results = await asyncio.gather(*(send(pool, server) for _ in range(5)))
        assert [r[0] for r in results] == [200] * 5
        assert server.connections == 1


async def test_a_cancelled_exchange_closes_its_connection() -> None:
    async with serving(lambda head: []) as server, pooled(server) as pool:
        sent = asyncio.Event()

        def never_answer(head: bytes) -> list[bytes | None]:
            sent.set()
            return []

        server.reply = never_answer
        task = asyncio.ensure_future(send(pool, server))
        await sent.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pool.idle_connections == 0
        assert pool._busy == 0


async def test_the_client_sends_whole_body_requests_through_the_lean_pool() -> None:
    async with serving(lambda head: [ok(b'{"major":"1","minor":"24"}')]) as server:
        config = ClientConfig(server=f"http://127.0.0.1:{server.port}", qps=-1)
        async with ApiClient(config) as client:
            response = await client.request("GET", "/version")
            assert response.json() == {"major": "1", "minor": "24"}
            transport = client._active_transport
            assert isinstance(transport, AiohttpTransport)
            pools = _LEAN_POOLS[transport._get_session()]
            assert [p.idle_connections for p in pools.values()] == [1]
        assert server.connections == 1


async def test_a_proxied_client_leaves_requests_to_aiohttp() -> None:
    transport = AiohttpTransport(proxy="http://127.0.0.1:1")
    try:
        assert transport._lean_pool(httpx.URL("https://kube.example:6443/")) is None
    finally:
        await transport.aclose()


CHUNKED_HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def open_stream(pool: LeanPool, server: Server, read: float = 5) -> httpx.Response:
    request = httpx.Request("GET", f"http://127.0.0.1:{server.port}/api/v1/pods?watch=1")
    stream = await pool.stream(request, None, connect=5, read=read)
    return httpx.Response(stream.status, headers=stream.headers, stream=stream)


async def test_a_stream_reads_its_body_as_it_comes_and_frees_the_connection_at_the_end() -> None:
    lines = [b'{"type":"ADDED"}\n', b'{"type":"MODIFIED"}\n']
    reply: Reply = lambda head: [CHUNKED_HEAD, *map(chunk, lines), b"0\r\n\r\n"]  # noqa: E731
    async with serving(reply) as server, pooled(server) as pool:
        for _ in range(2):
            response = await open_stream(pool, server)
            assert response.status_code == 200
            assert b"".join([piece async for piece in response.aiter_raw()]) == b"".join(lines)
            await response.aclose()
        assert server.connections == 1
        assert pool.idle_connections == 1


async def test_a_stream_closed_before_its_end_does_not_return_its_connection() -> None:
    reply: Reply = lambda head: [CHUNKED_HEAD, chunk(b"{}\n")]  # noqa: E731  (never ends)
    async with serving(reply) as server, pooled(server) as pool:
        response = await open_stream(pool, server)
        async for piece in response.aiter_raw():
            assert piece == b"{}\n"
            break
        await response.aclose()
        assert pool.idle_connections == 0
        assert pool._busy == 0


async def test_a_stream_cut_by_the_server_is_a_read_error() -> None:
    reply: Reply = lambda head: [CHUNKED_HEAD, chunk(b"{}\n"), None]  # noqa: E731
    async with serving(reply) as server, pooled(server) as pool:
        response = await open_stream(pool, server)
        with pytest.raises(httpx.ReadError):
            async for _ in response.aiter_raw():
                pass
        await response.aclose()
        assert pool.idle_connections == 0


async def test_a_stream_that_goes_quiet_times_out_per_read() -> None:
    reply: Reply = lambda head: [CHUNKED_HEAD, chunk(b"{}\n")]  # noqa: E731
    async with serving(reply) as server, pooled(server) as pool:
        response = await open_stream(pool, server, read=0.05)
        reads = response.aiter_raw()
        assert await anext(reads) == b"{}\n"  # what came before the silence is delivered
        with pytest.raises(httpx.ReadTimeout):
            await anext(reads)
        await response.aclose()


async def test_an_error_answer_to_a_stream_is_read_whole() -> None:
    status = b'{"kind":"Status","code":410,"reason":"Expired"}'
    reply: Reply = lambda head: [  # noqa: E731
        b"HTTP/1.1 410 Gone\r\nContent-Length: %d\r\n\r\n" % len(status) + status
    ]
    async with serving(reply) as server, pooled(server) as pool:
        response = await open_stream(pool, server)
        assert response.status_code == 410
        assert await response.aread() == status
        await response.aclose()
        assert pool.idle_connections == 1


async def test_a_reader_behind_by_megabytes_pauses_the_socket_and_loses_nothing() -> None:
    pieces = [bytes([65 + i % 26]) * 65536 for i in range(64)]  # 4 MiB
    reply: Reply = lambda head: [CHUNKED_HEAD, *map(chunk, pieces), b"0\r\n\r\n"]  # noqa: E731
    async with serving(reply) as server, pooled(server) as pool:
        response = await open_stream(pool, server)
        stream = response.stream
        assert isinstance(stream, LeanStream)
        assert stream._conn is not None
        transport = stream._conn.transport
        paused = asyncio.Event()
        pause_reading = transport.pause_reading

        def pause() -> None:
            pause_reading()
            paused.set()

        transport.pause_reading = pause
        await paused.wait()  # the reader has not read yet: a megabyte is queued
        received = b"".join([piece async for piece in response.aiter_raw()])
        assert received == b"".join(pieces)
        await response.aclose()
        assert pool.idle_connections == 1


async def test_closing_the_pool_closes_a_stream_its_caller_dropped() -> None:
    reply: Reply = lambda head: [CHUNKED_HEAD, chunk(b"{}\n")]  # noqa: E731  (never ends)
    async with serving(reply) as server, pooled(server) as pool:
        stream = await pool.stream(
            httpx.Request("GET", f"http://127.0.0.1:{server.port}/w"), None, connect=5, read=5
        )
        conn = stream._conn
        assert conn is not None
        pool.close()  # the client closes while the stream is still held (never aclosed)
        assert conn.closed
        assert conn.transport.is_closing()
        del stream  # and a dropped stream gives its slot back
        assert pool._busy == 0


async def test_a_connection_made_after_the_pool_closed_is_closed_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request connecting while its client closes: the connection it gets would belong to
    nothing and stay open (an unclosed transport at the next GC). It is closed at once and
    the request fails with ConnectError."""
    made: list[Any] = []
    gate = asyncio.Event()
    real = asyncio.get_running_loop()

    class GatedLoop:  # the real loop; create_connection returns only once the gate opens
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        async def create_connection(self, *args: Any, **kwargs: Any) -> Any:
            result = await real.create_connection(*args, **kwargs)
            made.append(result[1])
            await gate.wait()
            return result

    monkeypatch.setattr(lean_http, "_loop", GatedLoop)
    failed: list[httpx.ConnectError] = []

    async def request(pool: LeanPool, server: Server) -> None:
        try:
            await send(pool, server)
        except httpx.ConnectError as exc:
            failed.append(exc)

    async with serving(lambda head: [ok(b"{}")]) as server, pooled(server) as pool:
        async with anyio.create_task_group() as tg:
            tg.start_soon(request, pool, server)
            while not made:  # until the connection exists (checkpoints, no clock)
                await anyio.lowlevel.checkpoint()
            pool.close()
            gate.set()
        assert [str(exc) for exc in failed] == ["the client's connection pool is closed"]
        assert made[0].closed
        assert made[0].transport.is_closing()
        assert pool._open == set()
        assert pool._busy == 0

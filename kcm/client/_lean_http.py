"""A lean HTTP/1.1 keep-alive pool (the aiohttp transport's fast path).

A controller's request is small and regular: one method, a path, a few headers that repeat, a
JSON body, a JSON answer read whole. aiohttp's ``ClientSession.request`` wraps each in request
and response objects, a task, timers, tracing and cookie hooks: about 100 µs of CPU, half of
what a request costs kcm's client end to end, and the largest single cost of a controller
manager at scale (benchmarks/controllers_vs_go.py). This pool writes the request bytes straight
to an asyncio protocol and parses the answer as it arrives (status line, headers,
``Content-Length`` or chunked body), so a request costs a few tens of µs.

:meth:`LeanPool.send` reads an answer whole; :meth:`LeanPool.stream` hands its body over as it
arrives (a watch: one piece per read, the socket paused while the reader is a megabyte behind).
Proxied requests stay on aiohttp. Answers that end the connection's usefulness
(``Connection: close``, a body delimited by the end of the connection, a stream closed before
its end) close it; anything malformed raises ``httpx.RemoteProtocolError``, and such a
connection never returns to the pool.
"""

from __future__ import annotations

import collections
import math
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import httpx

__all__ = ["LeanPool", "LeanStream", "ProtocolError"]

_CRLF = b"\r\n"
_HEADERS_END = b"\r\n\r\n"
_MAX_HEADER_BYTES = 1 << 20
_NO_BODY_STATUS = frozenset({204, 304})
_STREAM_HIGH_WATER = 1 << 20


def _loop() -> Any:
    """The running asyncio event loop (this pool is the aiohttp transport's: asyncio only)."""
    return anyio.lowlevel.current_token().native_token


class ProtocolError(Exception):
    """The server's answer is not valid HTTP/1.1."""


class _Answer:
    """The parse state of one response."""

    __slots__ = (
        "body",
        "chunk_left",
        "done",
        "headers",
        "keep_alive",
        "length",
        "mode",
        "status",
    )

    def __init__(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.keep_alive = True
        self.mode: str = (
            ""  # "length", "chunked", "none" or "close" (the body ends with the connection)
        )
        self.length = 0
        self.chunk_left = -1  # bytes left in the current chunk, -1 between chunks
        self.body: bytearray = bytearray()
        self.done = False


class _Connection:
    """One keep-alive connection; one exchange at a time (an asyncio protocol: the event loop
    calls the four protocol methods below)."""

    def __init__(self, loop: Any) -> None:
        self.loop = loop  # the event loop it lives on (looked up once, not per exchange)
        self.transport: Any = None  # asyncio.Transport
        self.closed = False
        self.idle_since = 0.0
        self._buf = bytearray()
        self._answer: _Answer | None = None
        self._head_only = False
        self._waiter: Any = None  # asyncio.Future[_Answer]
        # streaming (a watch): body pieces queue here until the reader takes them
        self._streaming = False
        self._pieces: list[bytes] = []
        self._queued = 0
        self._paused = False
        self._reader: Any = None  # asyncio.Future[None]
        self._error: BaseException | None = None
        # read timeouts: one lazily re-armed timer for all exchanges and reads (_arm_deadline)
        self._deadline = 0.0
        self._timer: Any = None  # asyncio.TimerHandle

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._answer is None or self._answer.done:  # bytes nobody asked for: not reusable
            self._fail(ProtocolError("the server sent data outside of a response"))
            return
        self._buf += data
        try:
            self._parse()
        except ProtocolError as exc:
            self._fail(exc)

    def eof_received(self) -> bool:
        self._eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._eof(exc)

    # -- the exchange --------------------------------------------------------------------

    async def exchange(self, data: bytes, head_only: bool, read_timeout: float | None) -> _Answer:
        """Send one request (its bytes) and wait at most ``read_timeout`` seconds for the whole
        answer (``TimeoutError``; one timer on the loop, no cancel scope: this runs for every
        request)."""
        try:
            return await self._start(data, head_only, read_timeout, streaming=False)
        finally:
            self._answer = None

    async def start_stream(self, data: bytes, read_timeout: float | None) -> _Answer:
        """Send one request and wait for the answer's head; the body then arrives through
        :meth:`read_piece` (each read waiting at most ``read_timeout`` seconds)."""
        try:
            return await self._start(data, False, read_timeout, streaming=True)
        except BaseException:
            self._answer = None
            raise

    async def _start(
        self, data: bytes, head_only: bool, read_timeout: float | None, *, streaming: bool
    ) -> _Answer:
        assert self.transport is not None
        if self.closed:  # closed by the server after the pool handed it out
            raise ConnectionResetError("the server closed the connection")
        loop = self.loop
        self._answer = _Answer()
        self._head_only = head_only
        self._streaming = streaming
        self._waiter = waiter = loop.create_future()
        self._arm_deadline(read_timeout)
        self.transport.write(data)
        try:
            answer: _Answer = await waiter
            return answer
        finally:
            self._waiter = None

    async def read_piece(self, read_timeout: float | None) -> bytes | None:
        """The body bytes received since the last call (None at the end of the body)."""
        pieces = await self.read_pieces(read_timeout)
        if pieces is None:
            return None
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    async def read_pieces(self, read_timeout: float | None) -> list[bytes] | None:
        """The body pieces received since the last call, as framed (one per chunk of a chunked
        body; None at the end of the body). Nothing is joined: a watch's chunks are its lines."""
        while True:
            if self._pieces:
                pieces, self._pieces = self._pieces, []
                self._queued = 0
                if self._paused:
                    self._paused = False
                    self.transport.resume_reading()
                return pieces
            if self._error is not None:
                raise self._error
            answer = self._answer
            if answer is None or answer.done:
                return None
            loop = self.loop
            self._reader = reader = loop.create_future()
            self._arm_deadline(read_timeout)
            try:
                await reader
            finally:
                self._reader = None

    def end_stream(self) -> bool:
        """Forget the stream; whether the connection can serve another request (the whole
        body was read and the server keeps the connection)."""
        answer, self._answer = self._answer, None
        self._streaming = False
        self._pieces = []
        reusable = answer is not None and answer.done and answer.keep_alive
        return reusable and self._error is None and not self.closed and not self._paused

    def _arm_deadline(self, timeout: float | None) -> None:
        """Time out the wait that starts now after ``timeout`` seconds (None: never).

        A timer per wait (created, pushed on the loop's heap, cancelled) cost ~15 % of a
        watch's read path, so one timer serves them all: a wait that ends in time leaves it
        armed, and when it fires it times out the wait then in progress if that one is past
        its deadline, or re-arms itself for that deadline.
        """
        if timeout is None:
            self._deadline = math.inf  # an armed timer finds nothing to time out
            return
        self._deadline = deadline = self.loop.time() + timeout
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = self.loop.call_at(deadline, self._deadline_reached)

    def _deadline_reached(self) -> None:
        self._timer = None
        waiting = (self._waiter is not None and not self._waiter.done()) or (
            self._reader is not None and not self._reader.done()
        )
        if not waiting or self._deadline == math.inf:
            return  # the next wait with a timeout arms it again
        if self.loop.time() >= self._deadline:
            self._fail(TimeoutError("no whole answer in time"))
        else:
            self._timer = self.loop.call_at(self._deadline, self._deadline_reached)

    def close(self) -> None:
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.transport is not None:
            self.transport.close()

    def _finish(self, answer: _Answer) -> None:
        answer.done = True
        if self._buf:  # bytes beyond the answer: the connection's framing is lost
            answer.keep_alive = False
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)
        self._wake_reader()

    def _fail(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)
        self._wake_reader()
        self.close()

    def _wake_reader(self) -> None:
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    def _emit(self, answer: _Answer, data: bytes) -> None:
        """Body bytes: kept for the whole answer, or queued for a stream's reader."""
        self._emit_chunks(answer, [data])

    def _emit_chunks(self, answer: _Answer, chunks: list[bytes]) -> None:
        """The body pieces parsed out of one read: kept for the whole answer, or queued for a
        stream's reader at once (reading paused while the reader is behind by more than a
        megabyte)."""
        if not self._streaming:
            for data in chunks:
                answer.body += data  # a bytearray: extended in place
            return
        self._pieces += chunks
        self._queued += sum(map(len, chunks))
        if self._queued > _STREAM_HIGH_WATER and not self._paused:
            self._paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def _eof(self, exc: BaseException | None = None) -> None:
        self.closed = True
        answer = self._answer
        if answer is not None and not answer.done:
            if answer.mode == "close":
                self._emit(answer, bytes(self._buf))
                self._buf.clear()
                answer.keep_alive = False
                self._finish(answer)
                return
            error = ConnectionResetError("the server closed the connection before answering")
            if exc is not None:
                error.__cause__ = exc
            self._fail(error)

    def _parse(self) -> None:
        answer = self._answer
        assert answer is not None
        buf = self._buf
        if not answer.mode:  # the head is not parsed yet
            end = buf.find(_HEADERS_END)
            if end < 0:
                if len(buf) > _MAX_HEADER_BYTES:
                    raise ProtocolError("response headers too large")
                return
            mode = self._parse_head(answer, bytes(buf[:end]))
            del buf[: end + 4]  # buf now starts with the body
            if answer.status < 200:  # 1xx: informational, the real answer follows
                self._answer = _Answer()
                self._parse()
                return
            if self._streaming and mode != "none":
                waiter = self._waiter
                if waiter is not None and not waiter.done():
                    waiter.set_result(answer)  # the head: the body streams from here
        if answer.mode == "length":
            if self._streaming:
                take = min(len(buf), answer.length)
                if take:
                    self._emit(answer, bytes(buf[:take]))
                    del buf[:take]
                    answer.length -= take
                if not answer.length:
                    self._finish(answer)
            elif len(buf) >= answer.length:
                answer.body = buf[: answer.length]
                del buf[: answer.length]
                self._finish(answer)
        elif answer.mode == "chunked":
            self._parse_chunks(answer)
        elif answer.mode == "none":
            self._finish(answer)
        elif self._streaming and buf:  # "close": the body is everything until the end
            self._emit(answer, bytes(buf))
            buf.clear()

    def _parse_head(self, answer: _Answer, head: bytes) -> str:
        """Status and headers into ``answer``; its body framing (``answer.mode``) returned."""
        lines = head.split(_CRLF)
        status_line = lines[0]
        if not status_line.startswith(b"HTTP/1.") or len(status_line) < 12:
            raise ProtocolError(f"not an HTTP/1.1 status line: {status_line[:80]!r}")
        try:
            answer.status = int(status_line[9:12])
        except ValueError:
            raise ProtocolError(f"bad status line: {status_line[:80]!r}") from None
        if status_line[5:8] == b"1.0":
            answer.keep_alive = False
        length = -1
        chunked = False
        headers = answer.headers
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep:
                raise ProtocolError(f"bad header line: {line[:80]!r}")
            value = value.strip()
            headers.append((name, value))
            lower = name.lower()
            if lower == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise ProtocolError(f"bad Content-Length: {value[:40]!r}") from None
            elif lower == b"transfer-encoding":
                chunked = value.lower().endswith(b"chunked")
            elif lower == b"connection":
                token = value.lower()
                if b"close" in token:
                    answer.keep_alive = False
                elif b"keep-alive" in token:
                    answer.keep_alive = True
        if self._head_only or answer.status in _NO_BODY_STATUS or answer.status < 200:
            answer.mode = "none"
        elif chunked:
            answer.mode = "chunked"
        elif length >= 0:
            answer.mode = "length"
            answer.length = length
        else:
            answer.mode = "close"
            answer.keep_alive = False
        return answer.mode

    def _parse_chunks(self, answer: _Answer) -> None:
        buf = self._buf
        pos = 0  # the buffer starts where the last call left off
        last_end = -1  # the end of the last chunk and its trailers, once seen
        chunks: list[bytes] = []
        # Chunk payloads are copied out once, through a view (a bytearray slice would be
        # copied twice); the view is released before the buffer is resized.
        try:
            with memoryview(buf) as view:
                while True:
                    if answer.chunk_left < 0:
                        end = buf.find(_CRLF, pos)
                        if end < 0:
                            break
                        try:
                            size = int(buf[pos:end], 16)  # int() ignores surrounding whitespace
                        except ValueError:
                            size = _chunk_size(buf[pos:end])  # extensions, or not a size
                        if size == 0:
                            # the last chunk: trailers (ignored) up to an empty line
                            if buf[end + 2 : end + 4] == _CRLF:
                                last_end = end + 4
                            else:
                                trailers_end = buf.find(_HEADERS_END, end)
                                if trailers_end >= 0:
                                    last_end = trailers_end + 4
                            break  # without the empty line: read the size line again later
                        pos = end + 2
                        answer.chunk_left = size
                    if len(buf) - pos < answer.chunk_left + 2:
                        break
                    end = pos + answer.chunk_left
                    if not buf.startswith(_CRLF, end):
                        raise ProtocolError("a chunk does not end with CRLF")
                    chunks.append(bytes(view[pos:end]))
                    pos = end + 2
                    answer.chunk_left = -1
        finally:  # on a framing error too: what came before it is delivered
            if chunks:
                self._emit_chunks(answer, chunks)
        if last_end >= 0:
            del buf[:last_end]
            self._finish(answer)
            return
        del buf[:pos]  # parsed: keep only what is left


def _chunk_size(line: bytearray) -> int:
    """The size on a chunk's size line (its extensions ignored)."""
    if b";" in line:
        line = line.split(b";", 1)[0]
    try:
        return int(line, 16)  # int() ignores surrounding whitespace
    except ValueError:
        raise ProtocolError(f"bad chunk size: {bytes(line.strip())[:20]!r}") from None


class LeanPool:
    """Keep-alive connections to one origin for whole-body requests.

    Args:
        host / port: the server.
        ssl_context: TLS settings (None: plain HTTP).
        server_hostname: the name to verify the certificate against (SNI), if not ``host``.
        limit: at most this many connections in use at once (0: no limit).
        keepalive: seconds an idle connection is kept before it is closed.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None,
        server_hostname: str | None,
        limit: int,
        keepalive: float,
    ) -> None:
        self._host = host
        self._port = port
        self._ssl = ssl_context
        self._server_hostname = server_hostname
        self.limit = limit
        self._keepalive = keepalive
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()  # idle and busy: close() closes every one
        self._closed = False  # after close(): a connection made then is closed at once
        self._busy = 0
        self._waiters: collections.deque[Any] = collections.deque()  # asyncio futures
        self._head_cache: dict[tuple[Any, ...], bytes] = {}

    @property
    def idle_connections(self) -> int:
        """Open connections waiting for a request (for tests)."""
        return len(self._idle)

    async def _connect(self, connect_timeout: float | None) -> _Connection:
        kwargs: dict[str, Any] = {}
        if self._ssl is not None:
            kwargs["ssl"] = self._ssl
            kwargs["server_hostname"] = self._server_hostname or self._host
        try:
            loop = _loop()
            with anyio.fail_after(connect_timeout):
                _, conn = await loop.create_connection(
                    lambda: _Connection(loop), self._host, self._port, **kwargs
                )
            assert isinstance(conn, _Connection)
            if self._closed:  # closed while connecting: the connection would outlive it
                conn.close()
                raise httpx.ConnectError("the client's connection pool is closed")
            self._open.add(conn)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout("connect timed out") from exc
        except OSError as exc:  # refused, unreachable, TLS handshake and verification
            raise httpx.ConnectError(f"cannot connect to {self._host}:{self._port}: {exc}") from exc
        return conn

    async def _acquire(self, connect_timeout: float | None) -> _Connection:
        while self.limit and self._busy >= self.limit:
            waiter = _loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._wake_next()  # woken, then cancelled: pass the free slot on
                else:
                    self._waiters.remove(waiter)
                raise
        self._busy += 1
        try:
            now = time.monotonic()
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed and now - conn.idle_since < self._keepalive:
                    return conn
                conn.close()
                self._open.discard(conn)
            return await self._connect(connect_timeout)
        except BaseException:
            self._release_slot()
            raise

    def _release_slot(self) -> None:
        self._busy -= 1
        self._wake_next()

    def _wake_next(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break

    def _release(self, conn: _Connection, reusable: bool) -> None:
        if reusable and not conn.closed:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()
            self._open.discard(conn)
        self._release_slot()

    def _head(self, request: httpx.Request, body: bytes | None) -> bytes:
        """The request line and headers, cached per distinct (method, target, headers)."""
        raw = request.headers.raw
        key = (
            request.method,
            request.url.raw_path,
            tuple(raw),
            None if body is None else len(body),
        )
        head = self._head_cache.get(key)
        if head is None:
            lines = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
            for name, value in raw:
                if name.lower() in (b"content-length", b"transfer-encoding"):
                    continue  # the body is sent whole, with its own length (below)
                lines += (name, b": ", value, _CRLF)
            if body is not None:
                lines += (b"Content-Length: ", str(len(body)).encode("ascii"), _CRLF)
            lines.append(_CRLF)
            head = b"".join(lines)
            if len(self._head_cache) >= 512:  # many distinct paths (names): never grow unbounded
                self._head_cache.clear()
            self._head_cache[key] = head
        return head

    async def send(
        self,
        request: httpx.Request,
        body: bytes | None,
        *,
        connect: float | None,
        read: float | None,
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """One exchange: (status, raw headers, whole body).

        Raises:
            httpx.ConnectError / httpx.ConnectTimeout: no connection could be made.
            httpx.ReadTimeout: no whole answer within ``read`` seconds.
            httpx.ReadError: the connection broke before the answer was complete.
            httpx.RemoteProtocolError: the answer is not valid HTTP/1.1.
        """
        head = self._head(request, body)
        data = head if not body else head + body
        conn = await self._acquire(connect)
        reusable = False
        try:
            with _HTTP_ERRORS:
                answer = await conn.exchange(data, request.method == "HEAD", read)
            reusable = answer.keep_alive
            return answer.status, answer.headers, bytes(answer.body)
        finally:
            self._release(conn, reusable)

    async def stream(
        self,
        request: httpx.Request,
        body: bytes | None,
        *,
        connect: float | None,
        read: float | None,
    ) -> LeanStream:
        """Send one request and return once the answer's head is in; the body is the returned
        stream's, each read waiting at most ``read`` seconds. Close the stream (the connection
        returns to the pool only when its body was read to the end).

        Raises:
            the same as :meth:`send` (``httpx.ReadTimeout``: no head within ``read`` seconds).
        """
        head = self._head(request, body)
        data = head if not body else head + body
        conn = await self._acquire(connect)
        try:
            with _HTTP_ERRORS:
                answer = await conn.start_stream(data, read)
        except BaseException:
            conn.end_stream()
            self._release(conn, False)
            raise
        return LeanStream(self, conn, answer, read)

    def close(self) -> None:
        """Close every connection, idle or busy (as aiohttp's connector does): a response
        its caller dropped without closing it must not keep a socket open past its client.
        A request still connecting gets ``httpx.ConnectError`` and its connection is closed
        as soon as it is made."""
        self._closed = True
        self._idle = []
        conns, self._open = self._open, set()
        for conn in conns:
            conn.close()


class LeanStream(httpx.AsyncByteStream):
    """The body of a streamed answer (a watch), as httpx reads it; owns its connection until
    closed."""

    def __init__(self, pool: LeanPool, conn: _Connection, answer: _Answer, read: float | None):
        self._pool = pool
        self._conn: _Connection | None = conn
        self._read = read
        self.status = answer.status
        self.headers = answer.headers

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None:
            return
        while True:
            with _HTTP_ERRORS:
                piece = await conn.read_piece(self._read)
            if piece is None:
                return
            yield piece

    async def read_pieces(self) -> list[bytes] | None:
        """The body pieces received since the last read, one per chunk (None at the end); for
        a watch, which splits lines itself and so saves joining and re-splitting the chunks.

        Raises:
            the errors of iterating the stream (``httpx.ReadTimeout``, ``httpx.ReadError``,
            ``httpx.RemoteProtocolError``).
        """
        conn = self._conn
        if conn is None:
            return None
        with _HTTP_ERRORS:
            return await conn.read_pieces(self._read)

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool._release(conn, conn.end_stream())

    def __del__(self) -> None:
        # Dropped without aclose (a cancellation between the answer's head and its caller):
        # the connection cannot be reused, but its socket and pool slot must not leak.
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.end_stream()
            self._pool._release(conn, False)


class _HttpErrors:
    """The connection's failures as httpx's transport errors (a class, not a generator
    context manager: this wraps every request and every piece of a watch)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            return
        if isinstance(exc, TimeoutError):  # first: TimeoutError is an OSError
            raise httpx.ReadTimeout("timed out waiting for the answer") from exc
        if isinstance(exc, ProtocolError):
            raise httpx.RemoteProtocolError(str(exc)) from exc
        if isinstance(exc, OSError):
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc


_HTTP_ERRORS = _HttpErrors()
"""``with _HTTP_ERRORS:`` maps the connection's failures (it keeps no state: one serves all)."""

"""A watch stream (newline-delimited JSON) -> ``WatchEvent[T]``, with an idle watchdog.

The reflector consumes this. Each line is decoded straight into ``WatchEvent[T]`` with a cached
decoder; only when that fails is the line inspected as plain JSON, because an ``ERROR`` event
carries a ``Status`` instead of a ``T``. Outcomes:

* ADDED / MODIFIED / DELETED / BOOKMARK: yielded.
* ERROR: raises the typed :class:`kcm.errors.ApiError` (410 -> ``ResourceExpired``).
* a malformed line: raises :class:`kcm.errors.WatchDecodeError` with the line; never skipped.
* the server ends the response (its ``timeoutSeconds`` passed): the iteration just ends.
* a read that waits ``idle_timeout`` seconds for bytes (on the injected clock) raises
  :class:`kcm.errors.RequestTimeout`.

Lines are fresh ``bytes`` objects, so no decoded value keeps a big chunk alive: a line split
out of a read, or, with kcm's own transport, the chunk that is exactly one line (newline
included), which is the common case (the API server sends one chunk per event).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

import anyio
import httpx
import msgspec

from kcm.clock import Clock, move_on_after
from kcm.errors import RequestTimeout, WatchDecodeError, api_error_from_status

from ._errors import map_http_errors

__all__ = ["WatchStream", "decode_watch_line"]

T = TypeVar("T")

_dict_decoder = msgspec.json.Decoder(dict[str, Any])


@runtime_checkable
class PieceStream(Protocol):
    """A response body that can hand over a read's pieces as framed (one per HTTP chunk),
    unjoined: kcm's own transport streams are; a watch then takes a chunk that is one line as
    the line, with no join and re-split."""

    async def read_pieces(self) -> list[bytes] | None:
        """The pieces received since the last call (None at the end of the body)."""
        ...


def decode_watch_line(line: bytes, decode: Callable[[bytes], T]) -> T:
    """Decode one watch line (a trailing newline allowed) with ``decode``; raise the typed
    error for ERROR or bad lines."""
    try:
        event = decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        first_error: Exception = exc
    else:
        if getattr(event, "type", None) != "ERROR":
            return event
        first_error = ValueError("ERROR event")
    if line.endswith(b"\n"):  # a whole chunk (see WatchStream._split): report the line only
        line = line[:-1]
    try:
        raw = _dict_decoder.decode(line)
    except msgspec.DecodeError:
        raise WatchDecodeError(
            f"watch stream sent a line that is not JSON: {first_error}", line=line
        ) from first_error
    obj = raw.get("object")
    if raw.get("type") == "ERROR" and isinstance(obj, dict):
        raise api_error_from_status(obj)
    raise WatchDecodeError(
        f"watch stream sent an event that does not match the expected type: {first_error}",
        line=line,
    ) from first_error


class WatchStream(Generic[T]):
    """Async iterator of decoded events over one streaming response.

    Created by :meth:`kcm.client.Api.watch`; use it inside that context manager only.
    """

    def __init__(
        self,
        response: httpx.Response,
        decode: Callable[[bytes], T],
        *,
        server: str,
        clock: Clock,
        idle_timeout: float,
        idle_timeout_by_transport: bool = False,
    ) -> None:
        self._response = response
        # The raw transport stream: watches ask for identity encoding, so nothing to decode.
        self._chunks: AsyncIterator[bytes] = aiter(cast(httpx.AsyncByteStream, response.stream))
        self._decode = decode
        self._server = server
        self._clock = clock
        self._idle = idle_timeout
        self._by_transport = idle_timeout_by_transport
        # a stream that hands over a read's chunks unjoined (see _split), as kcm's own does
        stream = response.stream
        self._pieces: Callable[[], Awaitable[list[bytes] | None]] | None = (
            stream.read_pieces if isinstance(stream, PieceStream) else None
        )
        self._lines: list[bytes] = []
        self._pos = 0
        self._rest = b""
        self._done = False

    def __aiter__(self) -> AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        while True:
            if self._pos < len(self._lines):
                line = self._lines[self._pos]
                self._lines[self._pos] = b""
                self._pos += 1
                if not line or line.isspace():  # not strip(): it copies a line ending in \n
                    continue
                return decode_watch_line(line, self._decode)
            if self._done:
                raise StopAsyncIteration
            await self._fill()

    def _idle_error(self) -> RequestTimeout:
        return RequestTimeout(
            f"watch received nothing for {self._idle:g}s (idle timeout)", server=self._server
        )

    async def aclose(self) -> None:
        """Stop reading and finish the chunk iterator (the caller closes the response).

        The transport's byte stream is a chain of async generators (httpx, httpcore); a chain
        abandoned half-way warns on trio. Resuming it once inside an already-cancelled scope
        makes the cancellation run through every generator, so all of them finish.
        """
        self._done = True
        self._lines, self._pos = [], 0
        if self._pieces is not None:
            return  # read without the chunk iterator: nothing to finish
        for _ in range(1000):  # buffered chunks come back without a checkpoint; skip them
            with anyio.CancelScope() as scope:
                scope.cancel()
                try:
                    await self._chunks.__anext__()
                except (StopAsyncIteration, Exception):
                    return
            if scope.cancelled_caught:
                return

    async def _read(self) -> list[bytes] | None:
        """The pieces of the next read (None at the end of the body)."""
        if self._pieces is not None:
            return await self._pieces()
        try:
            return [await self._chunks.__anext__()]
        except StopAsyncIteration:
            return None

    async def _fill(self) -> None:
        # Each read may wait at most idle_timeout for the next bytes: the transport's read
        # timeout on the real clock, else a scope on the injected clock.
        pieces: list[bytes] | None = None
        error: Exception | None = None
        if self._by_transport:
            try:
                pieces = await self._read()
            except httpx.TimeoutException as exc:
                raise self._idle_error() from exc
            except Exception as exc:
                error = exc
        else:
            async with move_on_after(self._clock, self._idle) as scope:
                try:
                    pieces = await self._read()
                except Exception as exc:  # re-raised below, outside the (fake-clock) task group
                    error = exc
            if scope.cancelled_caught and pieces is None and error is None:
                raise self._idle_error()
        if error is not None:
            with map_http_errors(self._server):
                raise error
        if pieces is None:
            self._done = True
            rest, self._rest = self._rest, b""
            self._lines, self._pos = ([rest] if rest.strip() else []), 0
            return
        self._lines, self._pos = self._split(pieces), 0

    def _split(self, pieces: list[bytes]) -> list[bytes]:
        """The complete lines in ``pieces`` after what was left of the last read (kept until
        its line ends). A piece that is exactly one line, as the API server sends them (one
        chunk per event), is that line, newline included: no copy."""
        lines: list[bytes] = []
        rest = self._rest
        for piece in pieces:
            if piece and not rest and piece.find(b"\n") == len(piece) - 1:
                lines.append(piece)
                continue
            parts = (rest + piece if rest else piece).split(b"\n")
            rest = parts.pop()
            lines += parts
        self._rest = rest
        return lines

"""The one place where httpx exceptions and failure responses become :mod:`kcm.errors` types.

No other module of kcm catches httpx exceptions: they all go through :func:`map_http_errors`,
and every non-2xx response goes through :func:`error_from_response`.
"""

from __future__ import annotations

import email.utils
import socket
import ssl
import time
from types import TracebackType
from typing import Any

import httpx
import msgspec

from kcm.errors import (
    ApiError,
    ConnectionFailed,
    KcmError,
    RequestTimeout,
    TlsVerificationFailed,
    TransportError,
    api_error_from_status,
)

__all__ = ["error_from_response", "map_http_errors", "parse_retry_after"]

_status_decoder = msgspec.json.Decoder(dict[str, Any])


class map_http_errors:
    """Turn httpx exceptions raised inside the block into :mod:`kcm.errors` types.

    Timeouts become :class:`RequestTimeout`; a refused connection or an unresolvable host
    :class:`ConnectionFailed`; an untrusted certificate :class:`TlsVerificationFailed`; every
    other transport failure (reset, EOF, protocol) :class:`TransportError`. All name
    ``server``. kcm errors pass through untouched.
    (A class, not a generator-based context manager: it wraps every request.)
    """

    __slots__ = ("server",)

    def __init__(self, server: str) -> None:
        self.server = server

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None or isinstance(exc, KcmError):
            return
        if isinstance(exc, httpx.TimeoutException):
            raise RequestTimeout(
                f"request timed out: {_describe(exc)}", server=self.server
            ) from exc
        if isinstance(exc, httpx.TransportError | httpx.StreamError | OSError):
            # (an aiohttp-backed transport could leak raw socket errors: OSError)
            cls, advice = _classify(exc)
            raise cls(
                f"cannot reach API server: {_describe(exc)}{advice}", server=self.server
            ) from exc


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it was raised from (aiohttp keeps the OS or certificate error in
    ``os_error``/``certificate_error``)."""
    chain: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or any(item is seen for seen in chain) or len(chain) > 16:
            continue
        chain.append(item)
        todo += [item.__cause__, item.__context__]
        for attribute in ("os_error", "certificate_error"):
            nested = getattr(item, attribute, None)
            if isinstance(nested, BaseException):
                todo.append(nested)
    return chain


def _classify(exc: BaseException) -> tuple[type[TransportError], str]:
    """Which :class:`TransportError` a transport failure is, with advice for the message."""
    chain = _causes(exc)
    if any(isinstance(e, ssl.SSLCertVerificationError) for e in chain):
        return TlsVerificationFailed, (
            "; the server's certificate is not trusted: check certificate-authority and "
            "tls-server-name in the kubeconfig"
        )
    if any(isinstance(e, ConnectionRefusedError | socket.gaierror) for e in chain) or (
        isinstance(exc, httpx.ConnectError) and not any(_is_reset(e) for e in chain)
    ):
        return ConnectionFailed, "; check the server URL and that the API server is running"
    return TransportError, ""


def _is_reset(exc: BaseException) -> bool:
    return isinstance(exc, ConnectionResetError | ConnectionAbortedError | BrokenPipeError)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def error_from_response(response: httpx.Response, body: bytes) -> ApiError:
    """The typed :class:`ApiError` for a failure response (its body must already be read).

    A ``Status`` body decides the type (reason first, then code); a non-Status body (a proxy's
    HTML page, say) still gives the type for the HTTP code and keeps the first 512 bytes as
    the message. ``Retry-After`` becomes ``TooManyRequests.retry_after``.
    """
    status: dict[str, Any] | None = None
    if body:
        try:
            decoded = _status_decoder.decode(body)
        except msgspec.DecodeError:
            decoded = None
        if isinstance(decoded, dict) and decoded.get("kind") == "Status":
            status = decoded
    if status is None:
        text = body[:512].decode("utf-8", "replace").strip()
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "code": response.status_code,
            "message": text or f"HTTP {response.status_code} {response.reason_phrase}",
            "reason": "",
        }
    status.setdefault("code", response.status_code)
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    return api_error_from_status(status, code=response.status_code, retry_after=retry_after)

"""Raw ASGI plumbing: the callable types, reading a body, decoding it, writing a response."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import yaml

from ._nesting import deeper_than, nesting_error
from ._status import StatusError

__all__ = [
    "JSON",
    "Receive",
    "Scope",
    "Send",
    "decode_body",
    "read_body",
    "respond",
    "too_large",
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

JSON = b"application/json"
_DRAIN = 256 * 1024
"""Bytes of an over-limit body read and dropped before the 413 (Go's
``maxPostHandlerReadBytes``)."""


async def read_body(receive: Receive, headers: dict[str, str], limit: int = 0) -> bytes:
    """The whole request body (what arrived before a disconnect), at most ``limit`` bytes
    (0: no limit).

    Past the limit nothing more is kept, so memory stays bounded whatever the client sends.
    As Go's server, up to :data:`_DRAIN` bytes more are read and dropped before the answer, so
    a client whose body is a little too large is not cut off while still sending (a much larger
    one is: the connection closes after the 413).

    Raises:
        StatusError: 413 RequestEntityTooLarge, as kube-apiserver's ``limitedReadBody``.
    """
    chunks = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        more = bool(message.get("more_body"))
        size += len(chunk)
        if limit and size > limit:
            await _drain(receive, more)
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def _drain(receive: Receive, more: bool) -> None:
    dropped = 0
    while more and dropped < _DRAIN:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        dropped += len(message.get("body", b""))
        more = bool(message.get("more_body"))


def too_large(limit: int) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def decode_body(body: bytes, kind: str = "") -> Any:
    """A JSON or YAML request body; 400 when it is empty or neither, or nested deeper than
    :data:`~._nesting.MAX_DEPTH` (JSON was checked on the raw bytes; YAML's indentation is
    only seen once decoded)."""
    if not body.strip():
        raise StatusError.bad_request("the request body is empty")
    try:
        return json.loads(body)
    except ValueError:
        pass
    try:
        value = yaml.safe_load(body)
    except RecursionError:
        raise nesting_error(body, None, "POST", "application/yaml", kind) from None
    except Exception as exc:
        raise StatusError.bad_request(f"error decoding the request body: {exc}") from exc
    if deeper_than(value):
        raise nesting_error(body, None, "POST", "application/yaml", kind)
    return value


async def respond(
    send: Send,
    status: int,
    body: bytes,
    headers: dict[str, str] | None = None,
    *,
    content_type: bytes = JSON,
) -> None:
    """A complete response: status, content type and length, extra headers, body."""
    raw_headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    for k, v in (headers or {}).items():
        raw_headers.append((k.lower().encode(), v.encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})

"""Raw ASGI plumbing: the callable types, reading a body, decoding it, writing a response."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import yaml

from ._status import StatusError

__all__ = [
    "JSON",
    "Receive",
    "Scope",
    "Send",
    "decode_body",
    "read_body",
    "respond",
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

JSON = b"application/json"


async def read_body(receive: Receive) -> bytes:
    """The whole request body (what arrived before a disconnect)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def decode_body(body: bytes) -> Any:
    """A JSON or YAML request body; 400 when it is empty or neither."""
    if not body.strip():
        raise StatusError.bad_request("the request body is empty")
    try:
        return json.loads(body)
    except ValueError:
        pass
    try:
        return yaml.safe_load(body)
    except Exception as exc:
        raise StatusError.bad_request(f"error decoding the request body: {exc}") from exc


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

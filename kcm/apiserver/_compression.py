"""Response compression, as kube-apiserver's ``APIResponseCompression`` (beta, on by default
in 1.24): a complete response whose body is larger than 128 KiB is gzipped (level 4, with
``Vary: Accept-Encoding``) when the request's ``Accept-Encoding`` has a ``gzip`` token. A
streamed response (a watch) never is; nor is one already encoded.

zlib does the work in C; a large body is compressed in a worker thread (zlib lets go of the
GIL), so one big list does not stall the event loop's other requests.
"""

from __future__ import annotations

import zlib
from collections.abc import MutableMapping
from typing import Any

import anyio.to_thread

from ._http import Send

__all__ = ["THRESHOLD", "accepts_gzip", "gzip_body", "gzipping"]

THRESHOLD = 128 * 1024
"""kube-apiserver's ``defaultGzipThresholdBytes``: a body must be larger to be compressed."""
_LEVEL = 4
"""kube-apiserver's ``defaultGzipContentEncodingLevel`` (less CPU than the default 6)."""
_IN_THREAD = 1024 * 1024
"""Bodies at least this large are compressed off the event loop."""


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether ``Accept-Encoding`` has a ``gzip`` token. As kube-apiserver, tokens are compared
    whole: ``gzip;q=0.5`` is not one."""
    return any(token.strip() == "gzip" for token in accept_encoding.split(","))


def gzip_body(body: bytes) -> bytes:
    """``body`` in the gzip format (a header with no name and time 0), at level 4."""
    packer = zlib.compressobj(_LEVEL, zlib.DEFLATED, 31)
    return packer.compress(body) + packer.flush()


def gzipping(send: Send) -> Send:
    """``send`` compressing each complete response over :data:`THRESHOLD` bytes.

    The response start is held until the first body message: a complete body (no
    ``more_body``) is compressed when large enough; a streamed one goes out as it is.
    """
    held: MutableMapping[str, Any] | None = None

    async def send_gzipped(message: MutableMapping[str, Any]) -> None:
        nonlocal held
        if message["type"] == "http.response.start":
            held = message
            return
        if held is None or message["type"] != "http.response.body":
            await send(message)
            return
        start, held = held, None
        body = message.get("body", b"")
        headers = list(start.get("headers") or [])
        big = not message.get("more_body") and len(body) > THRESHOLD
        if big and not any(name.lower() == b"content-encoding" for name, _ in headers):
            if len(body) >= _IN_THREAD:
                body = await anyio.to_thread.run_sync(gzip_body, body)
            else:
                body = gzip_body(body)
            headers = [(n, v) for n, v in headers if n.lower() != b"content-length"]
            headers += [
                (b"content-encoding", b"gzip"),
                (b"vary", b"Accept-Encoding"),
                (b"content-length", str(len(body)).encode()),
            ]
            start = {**start, "headers": headers}
            message = {**message, "body": body}
        await send(start)
        await send(message)

    return send_gzipped

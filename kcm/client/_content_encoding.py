"""Decoding a response body the server compressed (``Content-Encoding``), in one C call.

kcm asks for ``Accept-Encoding: gzip`` as client-go does (unless
``ClientConfig.disable_compression``); kube-apiserver then gzips responses over 128 KiB. A
body the transport read whole is inflated here with one ``zlib.decompress`` (C, no Python
loop over chunks); httpx's streaming decoders remain for everything else.
"""

from __future__ import annotations

import zlib

__all__ = ["ACCEPT_ENCODING", "decode_content"]

ACCEPT_ENCODING = "gzip"
"""What kcm sends, exactly as Go's HTTP transport does for client-go."""
_GZIP = 16 + zlib.MAX_WBITS
_ZLIB_OR_RAW = (zlib.MAX_WBITS, -zlib.MAX_WBITS)


def decode_content(data: bytes, encoding: str) -> bytes | None:
    """``data`` inflated from ``encoding`` (a ``Content-Encoding`` value); None for an
    encoding this function does not handle (the caller falls back to httpx's decoders).

    Raises:
        zlib.error: the body is not valid for its encoding.
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return data
    if encoding == "gzip":
        return zlib.decompress(data, _GZIP)
    if encoding == "deflate":  # zlib-wrapped as the standard says, or raw as some servers send
        try:
            return zlib.decompress(data, _ZLIB_OR_RAW[0])
        except zlib.error:
            return zlib.decompress(data, _ZLIB_OR_RAW[1])
    return None

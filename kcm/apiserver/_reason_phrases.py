"""HTTP/1.1 status lines with reason phrases (``HTTP/1.1 409 Conflict``), as Go's net/http
writes them.

ASGI has no way to pass a reason phrase and hypercorn builds its h11 responses without one,
so every status line read ``HTTP/1.1 409 `` and clients that print the phrase (kubectl's
``Error from server (...)`` on non-Status bodies, httpx's ``reason_phrase``) showed nothing.
:func:`install` gives hypercorn's HTTP/1.1 protocol module an ``h11`` whose ``Response``
fills in the standard phrase; everything else in ``h11`` is the real module, and nothing
outside hypercorn's HTTP/1.1 protocol is affected.
"""

from __future__ import annotations

import http
import types
from typing import Any

import h11

__all__ = ["install"]


def reason_phrase(status_code: int) -> bytes:
    """The standard phrase of ``status_code`` (empty for an unknown code, as Go)."""
    try:
        return http.HTTPStatus(status_code).phrase.encode()
    except ValueError:
        return b""


def _response(*, status_code: int, reason: Any = b"", **kwargs: Any) -> h11.Response:
    return h11.Response(
        status_code=status_code, reason=reason or reason_phrase(status_code), **kwargs
    )


class _H11WithReasons(types.ModuleType):
    """The ``h11`` module, but ``Response`` defaults its reason to the standard phrase."""

    Response = staticmethod(_response)

    def __getattr__(self, name: str) -> Any:
        return getattr(h11, name)


def install() -> None:
    """Make hypercorn's HTTP/1.1 responses carry reason phrases (idempotent)."""
    from hypercorn.protocol import h11 as protocol

    if not isinstance(getattr(protocol, "h11", None), _H11WithReasons):
        setattr(protocol, "h11", _H11WithReasons("h11"))  # noqa: B010 - not re-exported

"""The TLS client certificate of the request being served (hypercorn hands none to the app).

ASGI has no standard way to pass the peer's certificate and hypercorn passes none, so
:func:`record_peer_certificates` wraps hypercorn's per-connection ``TCPServer.run`` to put
it in a context variable that every task serving the connection's requests inherits (asyncio
and trio copy the context into the tasks a connection spawns). Both of kcm's HTTPS servers
use it: the embedded API server (``kcm.apiserver``) and the controller manager's secure port
(``kcm.runtime``); it lives here because neither may import the other.
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any

__all__ = ["peer_certificate", "record_peer_certificates"]

_PEER: ContextVar[bytes | None] = ContextVar("kcm_peer_certificate", default=None)
_INSTALLED = "__kcm_peer_certificate__"


def peer_certificate() -> bytes | None:
    """The DER certificate the TLS peer of the current request presented, if any (the TLS
    layer has verified it against the client CAs: ``ssl.CERT_OPTIONAL``)."""
    return _PEER.get()


def record_peer_certificates() -> None:
    """Record each TLS connection's peer certificate for its requests (idempotent)."""
    from hypercorn.asyncio import tcp_server as asyncio_server
    from hypercorn.trio import tcp_server as trio_server

    for server, grab in (
        (asyncio_server.TCPServer, _asyncio_peer),
        (trio_server.TCPServer, _trio_peer),
    ):
        run = server.run
        if getattr(run, _INSTALLED, False):
            continue

        @functools.wraps(run)
        async def wrapped(self: Any, _run: Any = run, _grab: Any = grab) -> None:
            _PEER.set(await _grab(self))
            await _run(self)

        setattr(wrapped, _INSTALLED, True)
        server.run = wrapped  # type: ignore[method-assign]


async def _asyncio_peer(server: Any) -> bytes | None:
    """asyncio has finished the handshake before a connection's callback runs."""
    ssl_object = server.writer.get_extra_info("ssl_object")
    return None if ssl_object is None else ssl_object.getpeercert(binary_form=True)


async def _trio_peer(server: Any) -> bytes | None:
    """trio handshakes lazily: do it here (hypercorn's own ``do_handshake`` is then a no-op)."""
    import trio

    stream = server.stream
    if not isinstance(stream, trio.SSLStream):
        return None
    with trio.move_on_after(server.config.ssl_handshake_timeout):
        try:
            await stream.do_handshake()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return None
    try:
        cert: bytes | None = stream.getpeercert(binary_form=True)
    except (trio.BrokenResourceError, trio.ClosedResourceError, AttributeError, ValueError):
        return None
    return cert

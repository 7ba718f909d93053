"""Client certificates: who a verified TLS peer is (kube's x509 authenticator).

The TLS layer asks for a certificate and, when one is sent, checks it against the client CA
(``ssl.CERT_OPTIONAL``: a request without one goes on to the other authenticators, one signed
by another CA fails the handshake, as with kube-apiserver). ASGI has no standard way to hand
the certificate to the app and hypercorn passes none, so :func:`install` wraps hypercorn's
per-connection ``TCPServer.run`` to put the peer's certificate in a context variable: every
task serving that connection's requests inherits it (asyncio and trio copy the context into
the tasks a connection spawns). The user is the certificate's subject: CN is the name,
each O a group (kube's ``CommonNameUserConversion``).
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any

from ._requester import Requester

__all__ = ["install", "peer_certificate", "user_from_certificate"]

_PEER: ContextVar[bytes | None] = ContextVar("kcm_apiserver_peer_certificate", default=None)
_INSTALLED = "__kcm_peer_certificate__"


def peer_certificate() -> bytes | None:
    """The DER certificate the TLS peer of the current request presented (verified), if any."""
    return _PEER.get()


@functools.lru_cache(maxsize=256)
def user_from_certificate(der: bytes) -> Requester | None:
    """CN as the user name, the O values as groups; None without a CN (cached: a client
    sends the same certificate on every connection)."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    subject = x509.load_der_x509_certificate(der).subject
    names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or not names[0].value:
        return None
    groups = tuple(str(a.value) for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return Requester(str(names[0].value), groups)


def install() -> None:
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

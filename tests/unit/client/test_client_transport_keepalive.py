"""Idle pooled connections outlive a controller's quiet spells: a new TLS connection costs the
client about as much CPU as several requests, so the pool keeps them for
:data:`KEEPALIVE_SECONDS` (longer than aiohttp's 15 s default), and still closes them before the
servers do (kube-apiserver after 90 s, the embedded server after 75 s)."""

from __future__ import annotations

import pytest
import sniffio

from kcm.client import ClientConfig
from kcm.client._transport import KEEPALIVE_SECONDS, AiohttpTransport, build_transport

pytestmark = pytest.mark.anyio

KUBE_APISERVER_IDLE_TIMEOUT = 90.0  # secure_serving.go: IdleTimeout
EMBEDDED_SERVER_KEEP_ALIVE = 75.0  # kcm/apiserver/_server.py: keep_alive_timeout


def test_keepalive_outlasts_aiohttp_default_and_ends_before_the_servers() -> None:
    assert 15.0 < KEEPALIVE_SECONDS < min(KUBE_APISERVER_IDLE_TIMEOUT, EMBEDDED_SERVER_KEEP_ALIVE)


async def test_the_pool_keeps_idle_connections_for_keepalive_seconds() -> None:
    transport = build_transport(ClientConfig(server="https://127.0.0.1:6443"), ssl_context=None)
    try:
        if sniffio.current_async_library() == "asyncio":
            assert isinstance(transport, AiohttpTransport)
            session = transport._get_session()
            assert session.connector is not None
            assert session.connector._keepalive_timeout == KEEPALIVE_SECONDS
        else:  # trio: httpx's own pool
            pool = transport._pool  # type: ignore[attr-defined]
            assert pool._keepalive_expiry == KEEPALIVE_SECONDS
    finally:
        await transport.aclose()

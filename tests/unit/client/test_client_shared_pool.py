"""Clients with the same TLS settings share one aiohttp pool on an event loop (as client-go's
clients share a transport), its limit the sum of theirs, closed by the last to leave."""

from __future__ import annotations

import httpx
import pytest
import sniffio

from kcm.client import ApiClient, ClientConfig, _shared_pool
from kcm.client._transport import AiohttpTransport, build_ssl_context

pytestmark = pytest.mark.anyio

HTTPS = ClientConfig(server="https://127.0.0.1:6443", insecure_skip_tls_verify=True)


def _session_of(client: ApiClient) -> object:
    transport = client._active_transport
    assert isinstance(transport, AiohttpTransport)
    return transport._get_session()


async def test_clients_with_the_same_tls_settings_share_one_pool() -> None:
    if sniffio.current_async_library() != "asyncio":
        pytest.skip("aiohttp is asyncio-only; trio clients keep httpx's pool each")
    before = _shared_pool.shared_sessions()
    async with ApiClient(HTTPS) as a, ApiClient(HTTPS, max_connections=5) as b:
        session = _session_of(a)
        assert _session_of(b) is session
        assert session.connector.limit == 105  # type: ignore[attr-defined]
        async with ApiClient(HTTPS, max_connections=0) as unlimited:
            assert _session_of(unlimited) is session
            assert session.connector.limit == 0  # type: ignore[attr-defined]
        assert session.connector.limit == 105  # type: ignore[attr-defined]
        assert _shared_pool.shared_sessions() == before + 1
    assert session.closed  # type: ignore[attr-defined]
    assert _shared_pool.shared_sessions() == before


async def test_other_tls_settings_get_their_own_pool() -> None:
    if sniffio.current_async_library() != "asyncio":
        pytest.skip("aiohttp is asyncio-only")
    verifying = ClientConfig(server="https://127.0.0.1:6443")
    assert build_ssl_context(verifying) is not build_ssl_context(HTTPS)
    async with ApiClient(HTTPS) as a, ApiClient(verifying) as b:
        assert _session_of(a) is not _session_of(b)
        a_session = _session_of(a)
    assert a_session.closed  # type: ignore[attr-defined]


async def test_a_closed_client_leaves_the_pool_open_for_the_others() -> None:
    if sniffio.current_async_library() != "asyncio":
        pytest.skip("aiohttp is asyncio-only")
    async with ApiClient(HTTPS) as a:
        session = _session_of(a)
        async with ApiClient(HTTPS) as b:
            assert _session_of(b) is session
        assert not session.closed  # type: ignore[attr-defined]
    assert session.closed  # type: ignore[attr-defined]


async def test_a_given_transport_is_not_shared() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={}))
    async with ApiClient(HTTPS, transport=transport) as client:
        assert client._active_transport is transport

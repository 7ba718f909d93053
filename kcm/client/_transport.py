"""The HTTP transport under kcm's httpx client: the single seam tests and benchmarks replace.

httpx is the API kcm is written against (requests, responses, auth flows, MockTransport in
tests). What moves the bytes is chosen here:

* on **asyncio** (the default when aiohttp is installed) an :class:`AiohttpTransport`, an
  :class:`httpx.AsyncBaseTransport` that sends through kcm's lean HTTP/1.1 pool
  (:mod:`._lean_http`), and through one ``aiohttp.ClientSession`` when a proxy is set. httpx's
  own connection pool (httpcore) is several times slower at high concurrency
  (encode/httpx#3215); the figures are in docs/client.md and docs/benchmarks.md.
* on **trio** (aiohttp is asyncio-only), or when aiohttp is missing, httpx's own
  :class:`httpx.AsyncHTTPTransport` with generous pool limits.

TLS settings come from :class:`ClientConfig` as one :class:`ssl.SSLContext` shared by both.
"""

from __future__ import annotations

import functools
import os
import ssl
import tempfile
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
import sniffio
from cachetools import LRUCache

from kcm._extras import require
from kcm.errors import ConfigError

from . import _shared_pool
from ._config import ClientConfig
from ._lean_http import LeanPool

if TYPE_CHECKING:
    import aiohttp
    import yarl

__all__ = [
    "BODY",
    "KEEPALIVE_SECONDS",
    "PRELOAD",
    "AiohttpTransport",
    "PreloadedBody",
    "build_ssl_context",
    "build_transport",
]

DEFAULT_MAX_CONNECTIONS = 100
KEEPALIVE_SECONDS = 60.0
"""How long an idle pooled connection is kept open (aiohttp's default is 15 s).

A new TLS connection costs the client about 1.3 ms of CPU (the handshake and the certificate
check), more than a whole request on a kept connection; controllers rate-limited to 20 requests
a second go idle for longer than 15 s often. client-go keeps idle connections for 90 s and
kube-apiserver closes them after 90 s (the embedded server after 75 s): 60 s keeps them across
a controller's quiet spells while the client still closes first, so a request never races the
server closing its connection."""
_EXTENSIONS = {"http_version": b"HTTP/1.1"}
PRELOAD = "kcm.preload"
"""Request extension: True when the caller reads the whole body anyway (every non-watch
request), so a transport may read it before returning and skip the streaming machinery."""
BODY = "kcm.body"
"""Request extension: the request body as bytes (spares a transport iterating the stream)."""
_LEAN_POOLS: weakref.WeakKeyDictionary[Any, dict[tuple[str, int], LeanPool]] = (
    weakref.WeakKeyDictionary()
)
"""The fast path's pools (:mod:`._lean_http`) of each aiohttp session, so the transports that
share a session (:mod:`._shared_pool`) share them too; closed with the session."""


def build_ssl_context(
    config: ClientConfig,
    *,
    client_certificate_data: bytes | None = None,
    client_key_data: bytes | None = None,
) -> ssl.SSLContext:
    """One SSL context for ``config``: its CA (or the system store), client cert, verify mode.

    Contexts are shared: a controller manager opens one client per controller, all with the
    same TLS settings, and each new context loads the system trust store (tens of ms of CPU).
    The cache is keyed by the settings, with files by path, size and modification time, so a
    rotated certificate file gets a new context. Do not modify the returned context.

    Raises:
        ConfigError: the CA bundle or client certificate/key cannot be loaded.
    """
    cert = client_certificate_data or config.client_certificate_data
    key = client_key_data or config.client_key_data
    cache_key = (
        config.certificate_authority_data,
        None if config.certificate_authority_data else _file_stamp(config.certificate_authority),
        config.insecure_skip_tls_verify,
        cert if cert and key else None,
        key if cert and key else None,
        None if cert and key else _file_stamp(config.client_certificate),
        None if cert and key else _file_stamp(config.client_key),
    )
    ctx = _ssl_contexts.get(cache_key)
    if ctx is None:
        ctx = _ssl_contexts[cache_key] = _new_ssl_context(config, cert, key)
    return ctx


_ssl_contexts: LRUCache[tuple[object, ...], ssl.SSLContext] = LRUCache(32)


def _file_stamp(path: str | None) -> tuple[str, int, int] | None:
    """A file's path, size and mtime (None without a path; -1s for a missing file)."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, st.st_size, st.st_mtime_ns)


def _new_ssl_context(config: ClientConfig, cert: bytes | None, key: bytes | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if config.certificate_authority_data:
        try:
            ctx.load_verify_locations(cadata=config.certificate_authority_data.decode("ascii"))
        except (ssl.SSLError, ValueError) as exc:
            raise ConfigError(
                f"certificate authority is not a valid PEM bundle: {exc}",
                path=config.certificate_authority or config.source or None,
                field="certificate-authority-data",
            ) from exc
    elif config.certificate_authority:
        try:
            ctx.load_verify_locations(cafile=config.certificate_authority)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"cannot load certificate authority: {exc}",
                path=config.certificate_authority,
                field="certificate-authority",
            ) from exc
    if config.insecure_skip_tls_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if cert and key:
        _load_cert_chain(ctx, cert, key, config)
    elif config.client_certificate and config.client_key:
        try:
            ctx.load_cert_chain(config.client_certificate, config.client_key)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"cannot load client certificate/key: {exc}",
                path=config.client_certificate,
                field="client-certificate",
            ) from exc
    return ctx


def _load_cert_chain(ctx: ssl.SSLContext, cert: bytes, key: bytes, config: ClientConfig) -> None:
    # ssl can only load a certificate chain from files: write a private temp dir, load, remove.
    with tempfile.TemporaryDirectory(prefix="kcm-tls-") as tmp:
        cert_path = os.path.join(tmp, "tls.crt")
        key_path = os.path.join(tmp, "tls.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        try:
            ctx.load_cert_chain(cert_path, key_path)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"client certificate/key are not a valid PEM pair: {exc}",
                path=config.client_certificate or config.source or None,
                field="client-certificate-data",
            ) from exc


class PreloadedBody(httpx.AsyncByteStream):
    """A response body already read into memory (``.data``); kcm's client takes it directly."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data


@functools.lru_cache(maxsize=4096)
def _yarl_url(url: str) -> yarl.URL:
    import yarl

    return yarl.URL(url, encoded=True)  # httpx already percent-encoded it


class _AiohttpStream(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        import aiohttp

        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except TimeoutError as exc:  # first: aiohttp's read timeouts are ClientErrors too
            raise httpx.ReadTimeout(str(exc) or "read timed out") from exc
        except aiohttp.ClientPayloadError as exc:
            raise httpx.RemoteProtocolError(str(exc)) from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        self._response.release()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An httpx transport for asyncio: kcm's lean HTTP/1.1 pool, aiohttp through a proxy.

    httpx builds the request and the response object, runs auth flows and decoding. Requests
    (whole answers and streams) go through :class:`~kcm.client._lean_http.LeanPool`; with a
    proxy, aiohttp keeps the connection pool and parses HTTP/1.1 (its C parser), and its
    exceptions are turned into the matching httpx exceptions, so callers see one exception
    family either way. The aiohttp session also anchors pool sharing (:mod:`._shared_pool`):
    the lean pools belong to it.

    Args:
        ssl_context: TLS settings (from :func:`build_ssl_context`).
        max_connections: pool size (aiohttp ``limit``).
        proxy: an HTTP proxy URL for every request.
        server_hostname: the name to verify the server certificate against (SNI).
        share_pool: use the connection pool of the other transports on this event loop with
            the same TLS context, proxy and server name (:mod:`._shared_pool`; client-go's
            transport cache) instead of a pool of its own; its limit grows by
            ``max_connections``.
    """

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        proxy: str | None = None,
        server_hostname: str | None = None,
        share_pool: bool = False,
    ) -> None:
        require("aiohttp", extra="aiohttp", feature="the aiohttp transport")
        self._ssl = ssl_context
        self._pool_key: _shared_pool.PoolKey | None = (
            (ssl_context, proxy, server_hostname, KEEPALIVE_SECONDS) if share_pool else None
        )
        self._limit = max_connections
        self._proxy = proxy
        self._server_hostname = server_hostname
        self._session: aiohttp.ClientSession | None = None
        self._timeouts: dict[tuple[Any, ...], aiohttp.ClientTimeout] = {}
        self._header_cache: dict[tuple[tuple[bytes, bytes], ...], Any] = {}

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            if self._pool_key is None:
                self._session = self._new_session()
            else:
                self._session = _shared_pool.acquire(self._pool_key, self._limit, self._new_session)
        return self._session

    def _new_session(self) -> aiohttp.ClientSession:
        import aiohttp

        connector = aiohttp.TCPConnector(
            limit=self._limit,
            limit_per_host=0,
            ssl=self._ssl if self._ssl is not None else True,
            ttl_dns_cache=300,
            keepalive_timeout=KEEPALIVE_SECONDS,
        )
        return aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,  # httpx decodes Content-Encoding itself
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Accept"),
            timeout=aiohttp.ClientTimeout(total=None),
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    def _timeout(self, request: httpx.Request, preload: bool) -> aiohttp.ClientTimeout:
        """httpx's timeout extension as an aiohttp ClientTimeout (cached; few distinct values).

        A request whose body is read at once gets one deadline (``read`` seconds for the whole
        exchange: a single timer instead of one re-armed per received chunk); a streaming one a
        per-read timeout.
        """
        import aiohttp

        t = request.extensions.get("timeout") or {}
        key = (t.get("connect"), t.get("read"), preload)
        timeout = self._timeouts.get(key)
        if timeout is None:
            connect, read, _ = key
            if preload:
                timeout = aiohttp.ClientTimeout(total=read, sock_connect=connect)
            else:
                timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=read)
            if len(self._timeouts) < 64:
                self._timeouts[key] = timeout
        return timeout

    def _headers(self, request: httpx.Request) -> Any:
        """Request headers for aiohttp, converted once per distinct set (cached, bounded).

        Converting httpx headers (decoding every name and value) and building aiohttp's
        multidict cost as much as a quarter of a small request; kcm sends the same few header
        sets over and over. ``Host`` is left to aiohttp, which derives it from the URL.
        """
        import multidict

        key = tuple(request.headers.raw)
        converted = self._header_cache.get(key)
        if converted is None:
            if len(self._header_cache) >= 256:  # rotating tokens: never grow without bound
                self._header_cache.clear()
            converted = multidict.CIMultiDictProxy(
                multidict.CIMultiDict(
                    (k.decode("latin-1"), v.decode("latin-1"))
                    for k, v in key
                    if k.lower() != b"host"
                )
            )
            self._header_cache[key] = converted
        return converted

    def _lean_pool(self, url: httpx.URL) -> LeanPool | None:
        """The fast path's pool for ``url``'s origin, shared with every transport that shares
        this one's aiohttp session; None when aiohttp must send (a proxy, a scheme other than
        http/https)."""
        if self._proxy:
            return None
        scheme = url.scheme
        if scheme not in ("http", "https"):
            return None
        session = self._get_session()
        pools = _LEAN_POOLS.get(session)
        if pools is None:
            pools = _LEAN_POOLS[session] = {}
        origin = (url.host, url.port or (443 if scheme == "https" else 80))
        pool = pools.get(origin)
        if pool is None:
            tls = None
            if scheme == "https":
                tls = self._ssl if self._ssl is not None else ssl.create_default_context()
            pool = pools[origin] = LeanPool(
                origin[0],
                origin[1],
                ssl_context=tls,
                server_hostname=self._server_hostname,
                limit=self._limit,
                keepalive=KEEPALIVE_SECONDS,
            )
        connector = session.connector
        if connector is not None:
            pool.limit = connector.limit  # a shared session's limit is the sum of its users'
        return pool

    async def _send_lean(
        self, pool: LeanPool, request: httpx.Request, body: bytes | None, preload: bool
    ) -> httpx.Response:
        t = request.extensions.get("timeout") or {}
        if not preload:
            stream = await pool.stream(request, body, connect=t.get("connect"), read=t.get("read"))
            return httpx.Response(
                status_code=stream.status,
                headers=stream.headers,
                stream=stream,
                extensions=_EXTENSIONS,
            )
        status, headers, content = await pool.send(
            request, body, connect=t.get("connect"), read=t.get("read")
        )
        return httpx.Response(
            status_code=status,
            headers=headers,
            stream=PreloadedBody(content),
            extensions=_EXTENSIONS,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        import aiohttp

        body = request.extensions.get(BODY)
        if body is None and request.method not in ("GET", "HEAD"):
            body = await request.aread()
        preload = bool(request.extensions.get(PRELOAD))
        pool = self._lean_pool(request.url)
        if pool is not None:
            try:
                return await self._send_lean(pool, request, body, preload)
            except httpx.TransportError as exc:
                exc.request = request
                raise
        session = self._get_session()
        url = _yarl_url(str(request.url))
        kwargs: dict[str, Any] = {}
        if self._proxy:
            kwargs["proxy"] = self._proxy
        if self._server_hostname:
            kwargs["server_hostname"] = self._server_hostname
        try:
            response = await session.request(
                request.method,
                url,
                headers=self._headers(request),
                data=body,
                timeout=self._timeout(request, preload),
                allow_redirects=False,
                compress=None,
                **kwargs,
            )
            if preload:
                try:
                    content = await response.read()
                finally:
                    response.release()
                return httpx.Response(
                    status_code=response.status,
                    headers=response.raw_headers,
                    stream=PreloadedBody(content),
                    extensions=_EXTENSIONS,
                )
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "connect timed out", request=request) from exc
        except TimeoutError as exc:  # aiohttp.ServerTimeoutError and plain timeouts
            raise httpx.ReadTimeout(str(exc) or "timed out", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc
        except aiohttp.ClientPayloadError as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.TransportError(str(exc) or type(exc).__name__, request=request) from exc
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_AiohttpStream(response),
            extensions=_EXTENSIONS,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            if self._pool_key is None:
                await session.close()
            else:
                await _shared_pool.release(self._pool_key, self._limit, session)
            if session.closed:
                for pool in _LEAN_POOLS.pop(session, {}).values():
                    pool.close()


def build_transport(
    config: ClientConfig,
    *,
    ssl_context: ssl.SSLContext | None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    backend: str = "auto",
    share_pool: bool = False,
) -> httpx.AsyncBaseTransport:
    """The transport kcm uses for ``config`` on the running event loop.

    Args:
        backend: ``"auto"`` (aiohttp on asyncio when installed, else httpx), ``"aiohttp"`` or
            ``"httpx"``.
        share_pool: share the connection pool with the other aiohttp transports on this loop
            with the same TLS settings (see :class:`AiohttpTransport`; httpx's pool is not
            shared).
    """
    if backend == "auto":
        backend = "httpx"
        try:
            if sniffio.current_async_library() == "asyncio":
                import aiohttp  # noqa: F401

                backend = "aiohttp"
        except (ImportError, sniffio.AsyncLibraryNotFoundError):
            pass
    if backend == "aiohttp":
        return AiohttpTransport(
            ssl_context=ssl_context,
            max_connections=max_connections,
            proxy=config.proxy_url,
            server_hostname=config.tls_server_name,
            share_pool=share_pool,
        )
    return httpx.AsyncHTTPTransport(
        verify=ssl_context if ssl_context is not None else True,
        limits=httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=KEEPALIVE_SECONDS,
        ),
        proxy=config.proxy_url,
        retries=0,
    )

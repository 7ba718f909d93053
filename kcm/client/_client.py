"""``ApiClient``: credentials, rate limit and retry policy per API server, over a shared pool.

Typed access goes through :meth:`ApiClient.api`, which returns an :class:`Api` handle per kind;
:meth:`ApiClient.request` is the raw escape hatch. Every request passes through the same path:
rate limit -> auth -> transport -> error mapping -> retry.
"""

from __future__ import annotations

import functools
import logging
import zlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar, overload
from urllib.parse import quote, urlencode

import anyio
import httpx
import msgspec

from kcm.clock import SYSTEM_CLOCK, Clock, move_on_after
from kcm.errors import (
    ConnectionFailed,
    DecodeError,
    RequestTimeout,
    TlsVerificationFailed,
    TransportError,
)

from ._auth import KubeAuth, TokenSource, build_auth
from ._config import ClientConfig
from ._content_encoding import ACCEPT_ENCODING, decode_content
from ._discovery import Discovery
from ._errors import error_from_response, map_http_errors, parse_retry_after
from ._ratelimit import TokenBucket
from ._request_urls import RequestUrls
from ._retry import RetryPolicy
from ._round_trip import round_trip
from ._transport import (
    BODY,
    DEFAULT_MAX_CONNECTIONS,
    PRELOAD,
    PreloadedBody,
    build_ssl_context,
    build_transport,
)

if TYPE_CHECKING:
    from kcm.models import ResourceInfo, Unstructured

    from ._api import Api

__all__ = ["ApiClient"]

log = logging.getLogger(__name__)
_debug = functools.partial(log.isEnabledFor, logging.DEBUG)
_EMPTY = httpx.ByteStream(b"")


T = TypeVar("T")

_DEFAULT_QPS = 20.0
_API_CACHE_SIZE = 4096


class ApiClient:
    """An async Kubernetes API client (use it as ``async with ApiClient(config) as client``).

    Args:
        config: where and how to connect (:func:`kcm.client.load_config`).
        transport: an httpx transport to use instead of the network (``httpx.MockTransport``,
            an in-process server). Default: :func:`kcm.client._transport.build_transport`
            (aiohttp-backed on asyncio, httpx's pool on trio).
        clock: time source for the rate limiter, retries, watch idle timeouts, token expiry.
        retry: the retry policy for non-watch requests.
        max_connections: how many connections this client may hold at once. On asyncio,
            clients with the same TLS settings share one aiohttp connection pool (as client-go's
            clients share a transport), whose limit is the sum of its clients'.
        token_source: an async ``(force) -> token`` giving the bearer token of every request
            instead of the config's credentials (``force`` after a 401); what
            kube-controller-manager's ``--use-service-account-credentials`` clients use.

    Guarantees:
        Safe to share between any number of tasks. Requests wait for the client-side token
        bucket (``config.qps``/``config.burst``) before they are sent, retries included.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock = SYSTEM_CLOCK,
        retry: RetryPolicy | None = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        token_source: TokenSource | None = None,
    ) -> None:
        self.config = config
        self._token_source = token_source
        self.clock = clock
        self.retry = retry or RetryPolicy()
        self._transport = transport
        self._max_connections = max_connections
        qps = _DEFAULT_QPS if config.qps == 0 else config.qps
        self.rate_limiter = TokenBucket(qps, config.burst, clock=clock)
        self._auth: KubeAuth | None = None
        self._http: httpx.AsyncClient | None = None
        self._server = config.server.rstrip("/")
        self._urls = RequestUrls(self._server)
        self._discovery = Discovery(self)
        self._active_transport: httpx.AsyncBaseTransport | None = None
        self._headers = {
            "Host": httpx.Request("GET", self._server).headers["Host"],
            "User-Agent": config.user_agent,
            "Accept": "application/json",
        }
        if not config.disable_compression:
            self._headers["Accept-Encoding"] = ACCEPT_ENCODING
        self._prepared: dict[str | None, httpx.Headers] = {}
        self._apis: dict[tuple[Any, str | None, ResourceInfo | None], Api[Any]] = {}
        self._timeout = httpx.Timeout(config.timeout).as_dict()

    # ---------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        self._auth = build_auth(self.config, clock=self.clock, token_source=self._token_source)
        transport = self._transport
        if transport is None:
            cert = key = None
            if self.config.exec is not None and self._auth is not None:
                cred = await self._auth.exec_credential()
                if cred is not None:
                    cert, key = cred.client_certificate_data, cred.client_key_data
            ssl_context = None
            if self._server.startswith("https:") or (self.config.proxy_url or "").startswith(
                "https:"
            ):
                ssl_context = build_ssl_context(
                    self.config, client_certificate_data=cert, client_key_data=key
                )
            transport = build_transport(
                self.config,
                ssl_context=ssl_context,
                max_connections=self._max_connections,
                share_pool=True,
            )
        self._active_transport = transport
        self._http = httpx.AsyncClient(
            base_url=self._server,
            transport=transport,
            auth=self._auth,
            timeout=httpx.Timeout(self.config.timeout),
            headers=self._headers,
            follow_redirects=False,
            trust_env=False,
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool, or leave the shared one (``async with`` does this)."""
        self._active_transport = None
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()  # closes the transport too

    @property
    def http(self) -> httpx.AsyncClient:
        """An :class:`httpx.AsyncClient` on the same transport, credentials and headers.

        For ad-hoc requests (no rate limit or retries). Only inside ``async with``.
        """
        if self._http is None:
            raise RuntimeError("use the ApiClient inside `async with ApiClient(config) as client`")
        return self._http

    # ---------------------------------------------------------------- typed access

    @overload
    def api(
        self, model: type[Unstructured], namespace: str | None = None, *, resource: ResourceInfo
    ) -> Api[Unstructured]: ...

    @overload
    def api(
        self, model: type[T], namespace: str | None = None, *, resource: ResourceInfo | None = None
    ) -> Api[T]: ...

    def api(
        self, model: type[T], namespace: str | None = None, *, resource: ResourceInfo | None = None
    ) -> Api[T]:
        """A typed handle for one kind, optionally bound to a namespace.

        Args:
            model: the model class (``Pod``), or ``Unstructured``/``PartialObjectMetadata``
                together with ``resource``.
            namespace: default namespace for namespaced kinds (else the object's, else
                ``config.namespace``). Ignored for cluster-scoped kinds.
            resource: the :class:`ResourceInfo` (required for ``Unstructured`` and
                ``PartialObjectMetadata``; :meth:`discover` finds it).

        Handles are stateless and cached per (model, namespace, resource): controllers ask
        for one per reconcile, and building one (its decoders' generic types) cost more than
        a request's bookkeeping.

        Raises:
            ValueError: the model has no resource information and none was given.
        """
        key = (model, namespace, resource)
        cached = self._apis.get(key)
        if cached is not None:
            return cached
        from ._api import Api

        api = Api(self, model, namespace=namespace, resource=resource)
        if len(self._apis) >= _API_CACHE_SIZE:
            self._apis.clear()  # many namespaces come and go: never grow without bound
        self._apis[key] = api
        return api

    async def discover(self, api_version: str, kind: str) -> ResourceInfo:
        """The :class:`ResourceInfo` of ``kind`` in ``api_version``.

        Built-in kinds resolve with no request. Others are looked up with the discovery
        endpoint of their group version (``/api/v1``, ``/apis/<group>/<version>``); results are
        cached and the group version is fetched again when a kind is missing (a CRD created
        after the first lookup).

        Raises:
            NotFound: the server does not serve that kind.
        """
        return await self._discovery.resource(api_version, kind)

    # ---------------------------------------------------------------- raw requests

    def _build(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None,
        content: bytes | None,
        json: Any,
        headers: Mapping[str, str] | None,
        timeout: dict[str, float | None],
        preload: bool,
    ) -> httpx.Request:
        """An httpx.Request, built the cheap way (this runs for every request).

        Headers are copied from prepared ``httpx.Headers`` (Host, User-Agent, Accept and the
        usual Content-Types) and the body is passed as a ready ``ByteStream`` with its
        Content-Length, which skips httpx's per-request header normalisation; URLs are the
        server's parsed URL with the path swapped in (:class:`RequestUrls`).
        """
        if json is not None:
            content = msgspec.json.encode(json)
        ctype = None
        if headers:
            if len(headers) == 1 and "Content-Type" in headers:
                ctype = headers["Content-Type"]
            else:
                extra = dict(headers)
                ctype = extra.pop("Content-Type", None)
        elif content is not None:
            ctype = "application/json"
        prepared = self._prepared.get(ctype)
        if prepared is None:
            fields = dict(self._headers)
            if ctype is not None:
                fields["Content-Type"] = ctype
            prepared = self._prepared.setdefault(ctype, httpx.Headers(fields))
        merged = httpx.Headers(prepared)  # a list copy, no re-normalising
        if headers and not (len(headers) == 1 and ctype is not None):
            merged.update(extra)
        if content is not None:
            merged["Content-Length"] = str(len(content))
        query = ""
        if params:
            query = urlencode(
                [(k, str(v)) for k, v in params.items() if v is not None], quote_via=quote
            )
        return httpx.Request(
            method,
            self._urls.url(path, query),
            headers=merged,
            stream=httpx.ByteStream(content) if content is not None else _EMPTY,
            extensions=self._extensions(timeout, preload, content),
        )

    def _extensions(
        self, timeout: dict[str, float | None], preload: bool, content: bytes | None
    ) -> dict[str, Any]:
        ext: dict[str, Any] = {"timeout": timeout, PRELOAD: preload}
        if content is not None:
            ext[BODY] = content
        if self.config.tls_server_name:
            ext["sni_hostname"] = self.config.tls_server_name
        return ext

    async def _body(self, response: httpx.Response) -> bytes:
        """The whole body (already in memory when the transport preloaded it)."""
        stream = response.stream
        if type(stream) is PreloadedBody:
            encoding = response.headers.get("content-encoding")
            if encoding is None:
                return stream.data
            try:
                decoded = decode_content(stream.data, encoding)
            except zlib.error as exc:
                raise DecodeError(f"cannot decode a {encoding} response body: {exc}") from exc
            if decoded is not None:
                return decoded
        return await response.aread()

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Transport round trip through the auth flow (401 -> refresh -> one retry)."""
        transport = self._active_transport
        if transport is None:
            raise RuntimeError("use the ApiClient inside `async with ApiClient(config) as client`")
        auth = self._auth
        if auth is None:
            response = await round_trip(transport, request)
        else:
            flow = auth.async_auth_flow(request)
            try:
                request = await flow.__anext__()
                while True:
                    response = await round_trip(transport, request)
                    try:
                        following = await flow.asend(response)
                    except StopAsyncIteration:
                        break
                    await response.aclose()
                    request = following
            finally:
                await flow.aclose()
        response.request = request
        return response

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        content: bytes | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request and return the successful response, body read.

        The escape hatch for anything :class:`Api` does not cover (``/version``, proxies,
        custom subresources). Rate-limited and retried like every other request.

        Args:
            method: HTTP method.
            path: path below the server URL (``/api/v1/namespaces``).
            params: query parameters.
            content: raw body; or ``json`` to send a JSON-encoded value.
            headers: extra headers (``Content-Type`` for patches).

        Returns:
            The 2xx response with ``.content`` loaded.

        Raises:
            ApiError: the most specific subclass for the failure Status (after retries).
            TransportError / RequestTimeout: the server could not be reached (after retries).
        """
        response, _ = await self._request(
            method, path, params=params, content=content, json=json, headers=headers
        )
        with map_http_errors(self._server):
            await response.aread()
        return response

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        content: bytes | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[httpx.Response, bytes]:
        """:meth:`request` returning the body separately (the Api's path; no extra copy)."""
        request = self._build(
            method,
            path,
            params=params,
            content=content,
            json=json,
            headers=headers,
            timeout=self._timeout,
            preload=True,
        )
        attempt = 0
        while True:
            attempt += 1
            if self.rate_limiter.enabled:
                await self.rate_limiter.acquire()
            try:
                with map_http_errors(self._server):
                    response = await self._send(request)
                    body = await self._body(response)
            except TransportError as exc:
                if isinstance(exc, ConnectionFailed | TlsVerificationFailed) or not (
                    self.retry.should_retry(
                        method=method, attempt=attempt, status=None, retry_after=None
                    )
                ):
                    raise
                delay = self.retry.delay(attempt, None)
                log.debug("%s %s failed (%s); retry in %.2fs", method, path, exc, delay)
                await self.clock.sleep(delay)
                continue
            status = response.status_code
            if _debug():
                log.debug("%s %s -> %d", method, path, status)
            if status < 400:
                return response, body
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if self.retry.should_retry(
                method=method, attempt=attempt, status=status, retry_after=retry_after
            ):
                delay = self.retry.delay(attempt, retry_after)
                log.debug("%s %s -> %d; retry in %.2fs", method, path, status, delay)
                await self.clock.sleep(delay)
                continue
            raise error_from_response(response, body)

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
        header_timeout: float | None = None,
    ) -> AsyncIterator[httpx.Response]:
        """Send one request and yield the response with its body still streaming (watches).

        Not retried. A failure status raises the typed :class:`ApiError` (body read first).

        Args:
            read_timeout: the transport's per-read timeout (None: no limit; kcm's watch has its
                own idle timeout on the injected clock).
            header_timeout: seconds (on the client's clock) to wait for the response headers.

        Raises:
            RequestTimeout: no response headers within ``header_timeout``.
        """
        timeout = dict(self._timeout, read=read_timeout)
        request = self._build(
            method,
            path,
            params=params,
            content=None,
            json=None,
            headers=headers,
            timeout=timeout,
            preload=False,
        )
        if self.rate_limiter.enabled:
            await self.rate_limiter.acquire()
        if header_timeout is None:
            with map_http_errors(self._server):
                response = await self._send(request)
        else:
            response = await self._send_within(request, header_timeout)
        try:
            if _debug():
                log.debug("%s %s -> %d (stream)", method, path, response.status_code)
            if response.status_code >= 400:
                with map_http_errors(self._server):
                    body = await response.aread()
                raise error_from_response(response, body)
            yield response
        finally:
            with anyio.CancelScope(shield=True), map_http_errors(self._server):
                await response.aclose()

    async def _send_within(self, request: httpx.Request, seconds: float) -> httpx.Response:
        result: httpx.Response | None = None
        error: Exception | None = None
        async with move_on_after(self.clock, seconds):
            try:
                result = await self._send(request)
            except Exception as exc:  # re-raised outside the (fake-clock) task group
                error = exc
        if error is not None:
            with map_http_errors(self._server):
                raise error
        if result is None:  # the deadline fired before the response headers
            raise RequestTimeout(f"no response headers within {seconds:g}s", server=self._server)
        return result

    def __repr__(self) -> str:
        return f"ApiClient(server={self._server!r})"

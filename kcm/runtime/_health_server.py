"""The manager's HTTP endpoint: ``/healthz``, ``/readyz`` and ``/metrics`` on hypercorn.

A tiny ASGI app (no framework) answers in kube-apiserver's health format and Prometheus' text
format; :class:`HealthServer` binds the socket itself (so port 0 works and the bound port is
known before anything is served) and runs hypercorn on whichever backend anyio runs on.
"""

from __future__ import annotations

import errno
import inspect
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, final
from urllib.parse import parse_qs

import anyio
import sniffio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry, Metric
from prometheus_client.exposition import choose_encoder

from kcm._extras import require
from kcm._peer_certificate import peer_certificate, record_peer_certificates

from ._delegated_auth import DelegatedAuth, Denied

__all__ = ["HealthCheck", "HealthServer", "HealthzApp", "ServingOptions", "parse_address"]

logger = logging.getLogger(__name__)

HealthCheck: TypeAlias = Callable[[], Awaitable[None] | None]
"""A named check: return (or await) normally when healthy, raise when not. The exception's
message is only shown to the caller of the endpoint for ``?verbose`` (kube's "reason
withheld" otherwise) and is always logged."""

_Scope: TypeAlias = Mapping[str, Any]
_Send: TypeAlias = Callable[[dict[str, Any]], Awaitable[None]]
_Receive: TypeAlias = Callable[[], Awaitable[dict[str, Any]]]


def parse_address(address: str) -> tuple[str, int]:
    """``"host:port"`` (``"[::1]:8080"``, ``":8080"`` = all interfaces) as ``(host, port)``.

    Raises:
        ValueError: no port, or the port is not a number in 0..65535.
    """
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(
            f"health address {address!r} must be 'host:port' (port 0 picks a free port)"
        )
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port_text)


async def _run_check(check: HealthCheck) -> str | None:
    """None if the check passed, else the reason it failed."""
    try:
        result = check()
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        return str(exc) or type(exc).__name__
    return None


@dataclass(frozen=True)
class ServingOptions:
    """How the manager's endpoint serves: ``ssl_context`` (None: plain HTTP), ``auth``
    (None: every request is allowed) and ``fallback_to_free_port`` (see
    :class:`HealthServer`)."""

    ssl_context: ssl.SSLContext | None = None
    auth: DelegatedAuth | None = None
    fallback_to_free_port: bool = False


def _ping() -> None:
    """Always healthy: the server answers."""


_PING: dict[str, HealthCheck] = {"ping": _ping}


@final
class HealthzApp:
    """The ASGI app: ``/healthz``, ``/livez``, ``/readyz`` (and ``/<endpoint>/<check>``) and
    ``/metrics``.

    Health endpoints behave as kube-apiserver's: 200 ``ok`` when every check passes; 500 with
    one ``[+]name ok`` / ``[-]name failed: reason withheld`` line per check and
    ``<endpoint> check failed`` when one fails; ``?verbose`` lists the checks (with the failure
    reasons) on success too; ``?exclude=name`` skips a check. An endpoint with no checks has
    kube's implicit ``ping``.

    Args:
        checks: endpoint name (``"healthz"``, ``"readyz"``) to its named checks; the mappings
            are read on each request, so checks added later are served.
        registry: what ``/metrics`` exposes (text format 0.0.4, or OpenMetrics if the client
            asks for it).
        auth: delegated authentication and authorization of every request (None: open).
    """

    def __init__(
        self,
        checks: Mapping[str, Mapping[str, HealthCheck]],
        registry: CollectorRegistry,
        *,
        auth: DelegatedAuth | None = None,
    ) -> None:
        self._checks = checks
        self._registry = registry
        self._auth = auth

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path = str(scope["path"]).rstrip("/") or "/"
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"), True)
        raw_headers = [
            (name.decode("latin-1").lower(), value.decode("latin-1"))
            for name, value in scope.get("headers", ())
        ]
        headers = dict(reversed(raw_headers))  # the first of repeated names, as Go's Get
        if self._auth is not None:
            try:
                await self._auth.check(
                    scope["method"],
                    path,
                    headers.get("authorization"),
                    certificate=peer_certificate(),
                    headers=raw_headers,
                )
            except Denied as denied:
                await _respond(send, denied.status, denied.body, "application/json")
                return
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, b"method not allowed\n")
            return
        if path == "/metrics":
            encoder, content_type = choose_encoder(headers.get("accept", ""))
            await _respond(send, 200, encoder(_WithoutCreated(self._registry)), content_type)
            return
        endpoint, _, single = path.lstrip("/").partition("/")
        checks = self._checks.get(endpoint)
        if checks is None:
            await _respond(send, 404, b"404 page not found\n")
            return
        status, body = await self._check(endpoint, dict(checks) or _PING, single, query)
        await _respond(send, status, body.encode())

    async def _check(
        self,
        endpoint: str,
        checks: dict[str, HealthCheck],
        single: str,
        query: dict[str, list[str]],
    ) -> tuple[int, str]:
        if single:
            if single not in checks:
                return 404, f"no check named {single!r} on /{endpoint}\n"
            reason = await _run_check(checks[single])
            if reason is None:
                return 200, "ok"
            logger.info("%s check %s failed: %s", endpoint, single, reason)
            return 500, f"internal server error: {reason}\n"
        excluded = set(query.get("exclude", []))
        verbose = "verbose" in query
        lines: list[str] = []
        failed = False
        for name, check in checks.items():
            if name in excluded:
                lines.append(f"[+]{name} excluded: ok")
                continue
            reason = await _run_check(check)
            if reason is None:
                lines.append(f"[+]{name} ok")
            else:
                failed = True
                logger.info("%s check %s failed: %s", endpoint, name, reason)
                shown = reason if verbose else "reason withheld"
                lines.append(f"[-]{name} failed: {shown}")
        if failed:
            return 500, "\n".join([*lines, f"{endpoint} check failed"]) + "\n"
        if verbose:
            return 200, "\n".join([*lines, f"{endpoint} check passed"]) + "\n"
        return 200, "ok"


async def _respond(
    send: _Send, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8"
) -> None:
    headers = [
        (b"content-type", content_type.encode("latin-1")),
        (b"content-length", str(len(body)).encode()),
        (b"x-content-type-options", b"nosniff"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@final
class _WithoutCreated:
    """``registry`` without the ``*_created`` series prometheus-client adds to counters,
    histograms and summaries (Go's client never has them; dropped here, in kcm's exposition,
    not by turning them off for every registry of the process)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            if metric.type not in _WITH_CREATED:
                yield metric
                continue
            kept = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            kept.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield kept


_WITH_CREATED = frozenset({"counter", "histogram", "summary", "gaugehistogram"})


@final
class HealthServer:
    """Serves an ASGI app with hypercorn on ``host:port`` until cancelled.

    The listening socket is bound and listening before ``task_status.started()``, so a client
    may connect as soon as :meth:`run` has started; :attr:`port` then holds the bound port
    (useful with port 0).

    Args:
        address: ``"host:port"``; port 0 picks a free port.
        app: the ASGI application.
        graceful_timeout: seconds open requests may take to finish after cancellation.
        ssl_context: serve HTTPS with it (None: plain HTTP).
        fallback_to_free_port: when ``address``'s port is taken, listen on a free port instead
            (and log it) rather than fail; for a laptop's embedded cluster, never a real one.

    Raises:
        ValueError: a malformed address.
    """

    def __init__(
        self,
        address: str,
        app: Callable[..., Awaitable[None]],
        *,
        graceful_timeout: float = 3.0,
        ssl_context: ssl.SSLContext | None = None,
        fallback_to_free_port: bool = False,
    ) -> None:
        self._host, self._port = parse_address(address)
        self._app = app
        self._graceful_timeout = graceful_timeout
        self._ssl = ssl_context
        self._fallback = fallback_to_free_port
        self._bound: tuple[str, int] | None = None

    @property
    def port(self) -> int | None:
        """The bound port while :meth:`run` runs (None before)."""
        return None if self._bound is None else self._bound[1]

    @property
    def address(self) -> str | None:
        """``host:port`` actually bound (None before :meth:`run` started)."""
        if self._bound is None:
            return None
        host, port = self._bound
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def _bind(self) -> socket.socket:
        try:
            return _listen(self._host, self._port)
        except OSError as exc:
            if not (self._fallback and exc.errno == errno.EADDRINUSE and self._port):
                raise
        sock = _listen(self._host, 0)
        logger.warning(
            "port %d is in use (another kcm?): serving /healthz and /metrics on port %d instead",
            self._port,
            sock.getsockname()[1],
        )
        return sock

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled, then let open requests finish (``graceful_timeout``).

        Raises:
            OSError: the address cannot be bound.
            kcm.errors.MissingExtra: hypercorn (``kcm[server]``) is not installed.
        """
        require("hypercorn", extra="server", feature="the manager's health and metrics server")
        sock = self._bind()
        try:
            host, port = sock.getsockname()[:2]
            self._bound = (str(host), int(port))
            stop = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._serve, sock, stop)
                logger.info(
                    "Serving %s on %s", "securely" if self._ssl else "plain HTTP", self.address
                )
                task_status.started()
                try:
                    await anyio.sleep_forever()
                finally:
                    stop.set()
        finally:
            self._bound = None
            sock.close()

    async def _serve(self, sock: socket.socket, stop: anyio.Event) -> None:
        # hypercorn is stopped through its shutdown trigger, not by cancellation (its asyncio
        # worker does not expect to be cancelled mid-cleanup); the shield keeps its graceful
        # shutdown intact, and hypercorn bounds that by graceful_timeout itself.
        from hypercorn.config import Sockets
        from hypercorn.utils import wrap_app

        if self._ssl is not None:
            record_peer_certificates()
        config = _hypercorn_config(self._ssl)
        config.graceful_timeout = self._graceful_timeout
        config.errorlog = logging.getLogger("kcm.runtime.http")
        config.accesslog = None
        app = wrap_app(self._app, config.wsgi_max_body_size, "asgi")
        sockets = Sockets([sock], [], []) if self._ssl else Sockets([], [sock], [])
        with anyio.CancelScope(shield=True):
            if sniffio.current_async_library() == "trio":
                from hypercorn.trio.run import worker_serve as trio_serve

                await trio_serve(app, config, sockets=sockets, shutdown_trigger=stop.wait)
            else:
                from hypercorn.asyncio.run import worker_serve as asyncio_serve

                await asyncio_serve(app, config, sockets=sockets, shutdown_trigger=stop.wait)


def _listen(host: str, port: int) -> socket.socket:
    """A listening, non-blocking socket; errors worded as kube-controller-manager's."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        error = OSError(
            f"failed to create listener: failed to listen on {where}: listen tcp {where}: "
            f"bind: {(exc.strerror or str(exc)).lower()}"
        )
        error.errno = exc.errno  # str() stays kube's line, without "[Errno 98]"
        raise error from exc
    return sock


def _hypercorn_config(context: ssl.SSLContext | None) -> Any:
    """hypercorn's config, serving with a ready SSL context instead of certificate paths."""
    from hypercorn.config import Config

    class _ContextConfig(Config):
        @property
        def ssl_enabled(self) -> bool:
            return context is not None

        def create_ssl_context(self) -> ssl.SSLContext | None:
            return context

    return _ContextConfig()

"""client-go's request metrics (``rest_client_*``) and request log lines, fed from one place.

A process (``kcm run``) turns them on for every client it runs with
:func:`observe_requests`, as client-go registers its metrics globally; the observer lives
in a context variable, so two managers in one process (tests) each count their own. The
URL label is client-go's template: names and namespaces become ``{name}``/``{namespace}``
and query values ``{value}``, so the label set stays bounded.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import posixpath
from collections.abc import Iterator
from typing import Any, final
from urllib.parse import parse_qsl, urlencode, urlsplit

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = [
    "REQUEST_DURATION_BUCKETS",
    "RequestMetrics",
    "current_request_metrics",
    "observe_requests",
    "url_template",
]

REQUEST_DURATION_BUCKETS = tuple(0.001 * 2**n for n in range(10))
"""client-go 1.24's ``rest_client_request_duration_seconds`` buckets: 1 ms doubling to 512 ms."""

_observer: contextvars.ContextVar[RequestMetrics | None] = contextvars.ContextVar(
    "kcm_request_metrics", default=None
)

request_log = logging.getLogger("kcm.client.requests")
"""Request lines at klog's -v=6 (level 8), headers at 7, bodies at 8 and 9 (levels 7-5)."""

_V6, _V7, _V8, _V9 = 8, 7, 6, 5
_MAX_URLS = 4096  # distinct request URLs whose bound series are kept
_TRUNCATE = 10240  # client-go truncates bodies at -v=8 to this many characters


@final
class RequestMetrics:
    """``rest_client_requests_total{code,method,host}`` and
    ``rest_client_request_duration_seconds{verb,url}`` on ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=registry,
        )
        self.duration = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb and URL.",
            ["verb", "url"],
            buckets=REQUEST_DURATION_BUCKETS,
            registry=registry,
        )

        # bound series by their label values: prometheus-client's labels() takes a lock and
        # validates on every call, and this runs on every request
        self._counts: dict[tuple[int | None, str, str], Any] = {}
        self._latencies: dict[tuple[str, str], Any] = {}  # by URL, bounded
        self._series: dict[tuple[str, str], Any] = {}  # by URL template

    def observe(self, method: str, url: str, host: str, code: int | None, seconds: float) -> None:
        """One finished round trip (``code`` None: no response, client-go's ``<error>``)."""
        count = self._counts.get((code, method, host))
        if count is None:
            label = "<error>" if code is None else str(code)
            count = self._counts[code, method, host] = self.requests.labels(label, method, host)
        count.inc()
        latency = self._latencies.get((method, url))
        if latency is None:
            # a manager writes to more distinct URLs (one per object) than any bound: a miss
            # must stay cheap, so the series are found by template, not made again
            if len(self._latencies) >= _MAX_URLS:
                self._latencies.clear()
            template = url_template(url)
            latency = self._series.get((method, template))
            if latency is None:
                latency = self._series[method, template] = self.duration.labels(method, template)
            self._latencies[method, url] = latency
        latency.observe(seconds)


def current_request_metrics() -> RequestMetrics | None:
    """The observer of this context (None: requests are not counted)."""
    return _observer.get()


@contextlib.contextmanager
def observe_requests(metrics: RequestMetrics | None) -> Iterator[None]:
    """Count the requests of every client used in this context (and tasks started in it)."""
    token = _observer.set(metrics)
    try:
        yield
    finally:
        _observer.reset(token)


def log_request(
    method: str,
    url: str,
    code: int | None,
    seconds: float,
    headers: list[tuple[str, str]],
    body: bytes | None,
    response_body: bytes | None = None,
) -> None:
    """client-go's round-tripper lines: ``GET URL 200 OK in 3 milliseconds`` and more."""
    if request_log.isEnabledFor(_V7):
        for name, value in headers:
            shown = "<masked>" if name.lower() == "authorization" else value
            request_log.log(_V7, "Request Header: %s: %s", name, shown)
    _log_body("Request Body", body)
    status = "<error>" if code is None else str(code)
    request_log.log(_V6, "%s %s %s in %d milliseconds", method, url, status, seconds * 1000)
    _log_body("Response Body", response_body)


def _log_body(what: str, body: bytes | None) -> None:
    if body and request_log.isEnabledFor(_V8):
        text = body.decode("utf-8", "replace")
        if not request_log.isEnabledFor(_V9) and len(text) > _TRUNCATE:
            text = text[:_TRUNCATE] + " [truncated]"
        request_log.log(_V8, "%s: %s", what, text)


@functools.lru_cache(maxsize=4096)
def url_template(url: str) -> str:
    """client-go's ``finalURLTemplate``: the URL with a name, namespace and query values
    replaced by ``{name}``, ``{namespace}`` and ``{value}``."""
    plain = _template_of_plain(url)
    if plain is not None:  # most URLs: no parse (a manager writes to one URL per object)
        return plain
    parts = urlsplit(url)
    query = ""
    if parts.query:
        keys = sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)})
        query = "?" + urlencode([(k, "{value}") for k in keys])
    path = _path_template(parts.path)
    return f"{parts.scheme}://{parts.netloc}{path}{query}"


def _template_of_plain(url: str) -> str | None:
    """:func:`url_template` of a ``scheme://host/path`` URL without query or fragment, without
    parsing it again (this runs for each new URL); None for any other URL."""
    if "?" in url or "#" in url:
        return None
    start = url.find("://")
    slash = url.find("/", start + 3) if start > 0 else -1
    if slash < 0 or not url[:start].islower():
        return None
    return url[:slash] + _path_template(url[slash:])


def _path_template(path: str) -> str:
    segments = path.split("/")
    if len(segments) <= 2:
        return path
    if segments[1] == "api":
        index = 3
    elif segments[1] == "apis":
        index = 4
    else:
        return "/{prefix}"
    rest = len(segments) - index
    if rest == 2:
        segments[index + 1] = "{name}"
    elif rest == 3:
        if segments[index + 2] in ("finalize", "status"):
            segments[index + 1] = "{name}"
        else:
            segments[index + 1] = "{namespace}"
    elif rest >= 4:
        segments[index + 1] = "{namespace}"
        if segments[index + 3] not in ("finalize", "status"):
            segments[index + 3] = "{name}"
    return posixpath.join("/", *segments[1:])

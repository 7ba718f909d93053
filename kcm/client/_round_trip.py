"""One transport round trip, counted, logged and traced when the process asks for it.

The single place the client's requests meet :mod:`._request_metrics` and
:mod:`._request_tracing`: nothing is measured unless ``rest_client_*`` metrics are on
(:func:`~._request_metrics.observe_requests`), klog's ``-v=6`` request lines are enabled or a
tracer is set (:func:`~._request_tracing.trace_requests`).
"""

from __future__ import annotations

import time

import httpx

from ._request_metrics import _V6, current_request_metrics, log_request, request_log
from ._request_tracing import current_tracer, request_span
from ._transport import BODY, PreloadedBody

__all__ = ["round_trip"]


async def round_trip(transport: httpx.AsyncBaseTransport, request: httpx.Request) -> httpx.Response:
    """``transport.handle_async_request(request)``, observed."""
    tracer = current_tracer()
    if tracer is not None:
        with request_span(tracer, request.method, str(request.url), request.headers) as span:
            response = await _observed(transport, request)
            span.set_attribute("http.response.status_code", response.status_code)
            return response
    return await _observed(transport, request)


async def _observed(transport: httpx.AsyncBaseTransport, request: httpx.Request) -> httpx.Response:
    metrics = current_request_metrics()
    logged = request_log.isEnabledFor(_V6)
    if metrics is None and not logged:
        return await transport.handle_async_request(request)
    started = time.perf_counter()
    code: int | None = None
    answer: bytes | None = None
    try:
        response = await transport.handle_async_request(request)
        code = response.status_code
        if logged and isinstance(response.stream, PreloadedBody):
            answer = response.stream.data  # a streamed body (a watch) is not logged
        elif logged and isinstance(response.stream, httpx.ByteStream):
            answer = b"".join(response.stream)  # already in memory (a test's transport)
        return response
    finally:
        seconds = time.perf_counter() - started
        url = str(request.url)
        if metrics is not None:
            metrics.observe(request.method, url, request.url.netloc.decode(), code, seconds)
        if logged:
            log_request(
                request.method,
                url,
                code,
                seconds,
                list(request.headers.items()),
                request.extensions.get(BODY),
                answer,
            )

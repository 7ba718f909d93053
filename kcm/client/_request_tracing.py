"""OpenTelemetry spans for the client's requests, when a process turns tracing on.

:func:`trace_requests` puts a tracer in a context variable (as
:func:`~kcm.client.observe_requests` does for metrics); each round trip made in that
context is then a client span ``HTTP <METHOD>`` (a child of the reconcile span it is made
in) and carries a ``traceparent`` header, as client-go's otelhttp transport does. Without a
tracer nothing is imported or measured: opentelemetry is an optional extra (``kcm[otel]``).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

__all__ = ["current_tracer", "trace_requests"]

_tracer: contextvars.ContextVar[Any] = contextvars.ContextVar("kcm_request_tracer", default=None)


def current_tracer() -> Any:
    """The OpenTelemetry tracer of this context (None: requests are not traced)."""
    return _tracer.get()


@contextlib.contextmanager
def trace_requests(tracer: Any) -> Iterator[None]:
    """Trace the requests of every client used in this context (and tasks started in it)
    with ``tracer`` (an ``opentelemetry.trace.Tracer``; None turns tracing off)."""
    token = _tracer.set(tracer)
    try:
        yield
    finally:
        _tracer.reset(token)


@contextlib.contextmanager
def request_span(tracer: Any, method: str, url: str, headers: Any) -> Iterator[Any]:
    """A client span around one round trip; the trace context goes into ``headers``."""
    from opentelemetry import propagate, trace

    attributes = {"http.request.method": method, "url.full": url}
    with tracer.start_as_current_span(
        f"HTTP {method}", kind=trace.SpanKind.CLIENT, attributes=attributes
    ) as span:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        for name, value in carrier.items():
            headers[name] = value
        yield span

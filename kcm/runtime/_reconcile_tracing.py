"""OpenTelemetry spans for reconciles, when a process turns tracing on.

:func:`trace_reconciles` puts a tracer in a context variable; every reconcile of a
controller started in that context is then a span ``reconcile`` (attributes: the
controller, the key and the reconcile id) that the requests it makes are children of, with
the error recorded when it fails. Off, a reconcile pays one context-variable lookup.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

__all__ = ["reconcile_span", "trace_reconciles"]

_tracer: contextvars.ContextVar[Any] = contextvars.ContextVar("kcm_reconcile_tracer", default=None)

_OFF = contextlib.nullcontext()


@contextlib.contextmanager
def trace_reconciles(tracer: Any) -> Iterator[None]:
    """Trace the reconciles of every controller run in this context with ``tracer`` (an
    ``opentelemetry.trace.Tracer``; None turns tracing off)."""
    token = _tracer.set(tracer)
    try:
        yield
    finally:
        _tracer.reset(token)


def reconcile_span(controller: str, key: object, reconcile_id: str) -> Any:
    """A context manager: the reconcile's span, or nothing when tracing is off."""
    tracer = _tracer.get()
    if tracer is None:
        return _OFF
    return tracer.start_as_current_span(
        "reconcile",
        attributes={
            "controller": controller,
            "key": str(key),
            "reconcile_id": reconcile_id,
        },
    )

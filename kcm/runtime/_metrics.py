"""controller-runtime's controller metrics (C26), registered per injected registry, no globals."""

from __future__ import annotations

import weakref
from typing import Any, final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["RECONCILE_TIME_BUCKETS", "ControllerMetrics"]

RECONCILE_TIME_BUCKETS: tuple[float, ...] = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7),
    *(0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15),
    *(20, 25, 30, 40, 50, 60),
)
"""controller-runtime's buckets of ``controller_runtime_reconcile_time_seconds`` (5 ms ... 60 s)."""

RESULT_LABELS = ("success", "error", "requeue", "requeue_after")


class _Families:
    """The metric families of one registry, created once and shared by its controllers."""

    def __init__(self, registry: CollectorRegistry) -> None:
        label = ["controller"]
        self.total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            [*label, "result"],
            registry=registry,
        )
        self.errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            label,
            registry=registry,
        )
        self.terminal = Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller",
            label,
            registry=registry,
        )
        self.timeouts = Counter(
            "controller_runtime_reconcile_timeouts_total",
            "Total number of reconciliation timeouts per controller",
            label,
            registry=registry,
        )
        self.time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            label,
            buckets=RECONCILE_TIME_BUCKETS,
            registry=registry,
        )
        self.active = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            label,
            registry=registry,
        )
        self.max_concurrent = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            label,
            registry=registry,
        )


_families: weakref.WeakKeyDictionary[CollectorRegistry, _Families] = weakref.WeakKeyDictionary()


@final
class ControllerMetrics:
    """The bound series of one controller; every method is a few dict lookups at most."""

    __slots__ = ("_active", "_errors", "_results", "_terminal", "_time", "_timeouts")

    def __init__(self, registry: CollectorRegistry, controller: str, max_concurrent: int) -> None:
        families = _families.get(registry)
        if families is None:
            families = _families[registry] = _Families(registry)
        self._results: dict[str, Any] = {
            result: families.total.labels(controller, result) for result in RESULT_LABELS
        }
        self._errors = families.errors.labels(controller)
        self._terminal = families.terminal.labels(controller)
        self._timeouts = families.timeouts.labels(controller)
        self._time = families.time.labels(controller)
        self._active = families.active.labels(controller)
        self._active.set(0)
        families.max_concurrent.labels(controller).set(max_concurrent)

    def started(self) -> None:
        self._active.inc()

    def finished(self, seconds: float) -> None:
        self._active.dec()
        self._time.observe(seconds)

    def result(self, result: str) -> None:
        self._results[result].inc()

    def error(self, *, terminal: bool) -> None:
        self._results["error"].inc()
        self._errors.inc()
        if terminal:
            self._terminal.inc()

    def timeout(self) -> None:
        self._timeouts.inc()

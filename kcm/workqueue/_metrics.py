"""Workqueue metrics under client-go's names, injected per queue (no process-global provider).

A queue built without ``metrics=`` holds ``None`` and skips every metrics call with one ``is
None`` test, so disabled metrics cost nothing measurable. :class:`PrometheusMetrics` registers
one collector in the :class:`prometheus_client.CollectorRegistry` you give it; queues only bump
plain numbers and every sample is computed when the registry is scraped, so there is no
background ticker and no lock on the hot path.
"""

from __future__ import annotations

import bisect
import itertools
import weakref
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import ClassVar, Protocol, cast, final

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from ..clock import Clock

__all__ = ["DEFAULT_BUCKETS", "MetricsProvider", "PrometheusMetrics", "QueueMetrics"]

_go_float = cast(Callable[[float], str], floatToGoString)

DEFAULT_BUCKETS: tuple[float, ...] = tuple(1e-8 * 10**i for i in range(10))
"""component-base's ``ExponentialBuckets(1e-8, 10, 10)``: 10 ns .. 10 s."""


class QueueMetrics(Protocol):
    """What one queue reports; called synchronously from the queue's hot path."""

    def add(self, item: Hashable) -> None:
        """An add that made ``item`` dirty (not merged into an earlier add)."""
        ...

    def get(self, item: Hashable) -> None:
        """``item`` was handed to a worker."""
        ...

    def done(self, item: Hashable) -> None:
        """A worker finished ``item``."""
        ...

    def retry(self) -> None:
        """An ``add_after`` (including ``add_rate_limited`` and delays <= 0)."""
        ...


class MetricsProvider(Protocol):
    """Builds the :class:`QueueMetrics` of each named queue (the seam for OpenTelemetry etc.)."""

    def queue_metrics(self, name: str, clock: Clock) -> QueueMetrics:
        """Metrics for the queue called ``name``; durations are measured on ``clock``."""
        ...


@final
class _Histogram:
    """A bare bucket counter; exported as a Prometheus histogram at scrape time."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(sorted(bounds))
        self.counts = [0] * (len(self.bounds) + 1)  # the last one is +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def cumulative(self) -> tuple[list[tuple[str, float]], float]:
        counts, total = list(self.counts), self.sum
        les = [*(_go_float(b) for b in self.bounds), "+Inf"]
        cumulative = itertools.accumulate(counts)
        return [(le, float(c)) for le, c in zip(les, cumulative, strict=True)], total


@final
class _PrometheusQueueMetrics:
    """One queue's numbers as plain ints and floats; the collector turns them into samples.

    Nothing here takes a lock or touches prometheus-client on the hot path, which keeps metrics
    cheap even when enabled (a scrape reads a consistent-enough snapshot, as client-go does).
    """

    __slots__ = (
        "__weakref__",
        "_add_times",
        "_clock",
        "_processing_starts",
        "adds",
        "depth",
        "name",
        "queue_duration",
        "retries",
        "work_duration",
    )

    def __init__(self, name: str, clock: Clock, buckets: Sequence[float]) -> None:
        self.name = name
        self._clock = clock
        self.depth = 0
        self.adds = 0
        self.retries = 0
        self.queue_duration = _Histogram(buckets)
        self.work_duration = _Histogram(buckets)
        self._add_times: dict[Hashable, float] = {}
        self._processing_starts: dict[Hashable, float] = {}

    def add(self, item: Hashable) -> None:
        self.adds += 1
        self.depth += 1
        if item not in self._add_times:
            self._add_times[item] = self._clock.monotonic()

    def get(self, item: Hashable) -> None:
        now = self._clock.monotonic()
        self.depth -= 1
        self._processing_starts[item] = now
        start = self._add_times.pop(item, None)
        if start is not None:
            self.queue_duration.observe(now - start)

    def done(self, item: Hashable) -> None:
        start = self._processing_starts.pop(item, None)
        if start is not None:
            self.work_duration.observe(self._clock.monotonic() - start)

    def retry(self) -> None:
        self.retries += 1

    def in_flight(self) -> tuple[float, float]:
        """(sum of ages, oldest age) of the items being processed, in seconds."""
        now = self._clock.monotonic()
        ages = [now - t for t in tuple(self._processing_starts.values())]
        return (sum(ages), max(ages)) if ages else (0.0, 0.0)


_HELP = {
    "depth": "Current depth of workqueue",
    "adds": "Total number of adds handled by workqueue",
    "queue_duration": "How long in seconds an item stays in workqueue before being requested.",
    "work_duration": "How long in seconds processing an item from workqueue takes.",
    "unfinished": "How many seconds of work has been done that is in progress and hasn't been "
    "observed by work_duration. Large values indicate stuck threads.",
    "longest": "How many seconds has the longest running processor for workqueue been running.",
    "retries": "Total number of retries handled by workqueue",
}


@final
class _WorkqueueCollector(Collector):
    """Builds every workqueue sample from the live queues when the registry is scraped."""

    def __init__(self, queues: weakref.WeakValueDictionary[str, _PrometheusQueueMetrics]) -> None:
        self._queues = queues

    def collect(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily("workqueue_depth", _HELP["depth"], labels=["name"])
        adds = CounterMetricFamily("workqueue_adds_total", _HELP["adds"], labels=["name"])
        queue_duration = HistogramMetricFamily(
            "workqueue_queue_duration_seconds", _HELP["queue_duration"], labels=["name"]
        )
        work_duration = HistogramMetricFamily(
            "workqueue_work_duration_seconds", _HELP["work_duration"], labels=["name"]
        )
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds", _HELP["unfinished"], labels=["name"]
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds", _HELP["longest"], labels=["name"]
        )
        retries = CounterMetricFamily("workqueue_retries_total", _HELP["retries"], labels=["name"])
        for name, queue in sorted(self._queues.items()):
            labels = [name]
            depth.add_metric(labels, queue.depth)
            adds.add_metric(labels, queue.adds)
            retries.add_metric(labels, queue.retries)
            buckets, total = queue.queue_duration.cumulative()
            queue_duration.add_metric(labels, buckets, total)
            buckets, total = queue.work_duration.cumulative()
            work_duration.add_metric(labels, buckets, total)
            total_age, oldest = queue.in_flight()
            unfinished.add_metric(labels, total_age)
            longest.add_metric(labels, oldest)
        yield from (depth, adds, queue_duration, work_duration, unfinished, longest, retries)

    def describe(self) -> Iterator[Metric]:
        # Empty families, so the registry refuses a second provider with the same names.
        saved, self._queues = self._queues, weakref.WeakValueDictionary()
        try:
            yield from self.collect()
        finally:
            self._queues = saved


@final
class PrometheusMetrics:
    """client-go's workqueue metrics in one :class:`~prometheus_client.CollectorRegistry`.

    One provider serves any number of queues, each labelled by its ``name``. Metric names:
    ``workqueue_depth``, ``workqueue_adds_total``, ``workqueue_queue_duration_seconds``,
    ``workqueue_work_duration_seconds``, ``workqueue_unfinished_work_seconds``,
    ``workqueue_longest_running_processor_seconds``, ``workqueue_retries_total``.

    Queues only bump plain counters; every sample (including the two in-flight gauges, which
    client-go refreshes on a 500 ms ticker) is computed when the registry is scraped.

    Args:
        registry: where the metrics are registered (one provider per registry).
        buckets: histogram buckets in seconds (default: component-base's
            ``ExponentialBuckets(1e-8, 10, 10)``, 10 ns .. 10 s; also
            ``PrometheusMetrics.default_buckets``).

    Raises:
        ValueError: from prometheus-client if the registry already has these metric names.
    """

    default_buckets: ClassVar[tuple[float, ...]] = DEFAULT_BUCKETS

    def __init__(
        self, registry: CollectorRegistry, *, buckets: Sequence[float] = DEFAULT_BUCKETS
    ) -> None:
        self._buckets = tuple(buckets)
        self._queues: weakref.WeakValueDictionary[str, _PrometheusQueueMetrics] = (
            weakref.WeakValueDictionary()
        )
        registry.register(_WorkqueueCollector(self._queues))
        _BY_REGISTRY.setdefault(registry, self)

    @classmethod
    def for_registry(cls, registry: CollectorRegistry) -> PrometheusMetrics:
        """The provider of ``registry``, created on first use (what ``metrics=registry`` uses).

        Returns the provider already built for ``registry`` (also one built explicitly).
        """
        provider = _BY_REGISTRY.get(registry)
        if provider is None:
            provider = cls(registry)
        return provider

    def queue_metrics(self, name: str, clock: Clock) -> QueueMetrics:
        """Metrics for the queue ``name``.

        Raises:
            ValueError: a live queue already reports under ``name`` (samples would collide).
        """
        if name in self._queues:
            raise ValueError(f"a workqueue named {name!r} already reports to this registry")
        metrics = _PrometheusQueueMetrics(name, clock, self._buckets)
        self._queues[name] = metrics
        return metrics


_BY_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, PrometheusMetrics] = (
    weakref.WeakKeyDictionary()
)

"""Workqueue metrics under client-go's names, injected per queue (no process-global provider).

Two label sets share the ``workqueue_*`` names in one registry: a standalone queue reports as
client-go's component-base does (label ``name``, buckets ``ExponentialBuckets(1e-8, 10, 10)``),
a controller's queue as controller-runtime does (labels ``name`` and ``controller``, buckets
``ExponentialBuckets(10e-9, 10, 12)``), so dashboards written for either keep working.

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
from typing import ClassVar, Protocol, cast, final, runtime_checkable

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from ..clock import Clock

__all__ = [
    "CONTROLLER_BUCKETS",
    "DEFAULT_BUCKETS",
    "DelayMetrics",
    "MetricsProvider",
    "PrometheusMetrics",
    "QueueMetrics",
]

_go_float = cast(Callable[[float], str], floatToGoString)

DEFAULT_BUCKETS: tuple[float, ...] = tuple(1e-8 * 10**i for i in range(10))
"""component-base's ``ExponentialBuckets(1e-8, 10, 10)``: 10 ns .. 10 s."""

CONTROLLER_BUCKETS: tuple[float, ...] = tuple(float(f"1e{i - 8}") for i in range(12))
"""controller-runtime's ``ExponentialBuckets(10e-9, 10, 12)``: 10 ns .. 1000 s."""


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


@runtime_checkable
class DelayMetrics(Protocol):
    """Optional for a :class:`QueueMetrics`: the delayed keys of a :class:`DelayingQueue`
    (kcm's own, not client-go's). What lets a test harness tell "idle" from "idle until a
    requeue fires in a moment" (``kcm_workqueue_delayed_items``,
    ``kcm_workqueue_next_delayed_seconds``)."""

    def delays(self, waiting: int, next_ready_at: float | None) -> None:
        """``waiting`` keys wait for their delay; the earliest is due at ``next_ready_at`` (on
        the queue's clock's ``monotonic()``; None: no key waits)."""
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
        "labels",
        "name",
        "next_ready_at",
        "queue_duration",
        "retries",
        "waiting",
        "work_duration",
    )

    def __init__(
        self, name: str, clock: Clock, buckets: Sequence[float], controller: str | None = None
    ) -> None:
        self.name = name
        self.labels = (
            {"name": name} if controller is None else {"name": name, "controller": controller}
        )
        self._clock = clock
        self.depth = 0
        self.adds = 0
        self.retries = 0
        self.queue_duration = _Histogram(buckets)
        self.work_duration = _Histogram(buckets)
        self._add_times: dict[Hashable, float] = {}
        self._processing_starts: dict[Hashable, float] = {}
        self.waiting = 0
        self.next_ready_at: float | None = None

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

    def delays(self, waiting: int, next_ready_at: float | None) -> None:
        self.waiting = waiting
        self.next_ready_at = next_ready_at

    def next_delayed(self) -> float:
        """Seconds until the earliest delayed key is due (0 if overdue; +Inf: none waits)."""
        if self.next_ready_at is None:
            return float("inf")
        return max(0.0, self.next_ready_at - self._clock.monotonic())

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
    "delayed": "kcm: keys waiting for an add_after delay to pass",
    "next_delayed": "kcm: seconds until the earliest delayed key is due (+Inf: none waits)",
}


def _family(name: str, key: str, typ: str) -> Metric:
    return Metric(name, _HELP[key], typ)


def _histogram_samples(
    family: Metric, labels: dict[str, str], histogram: _Histogram
) -> Iterator[Sample]:
    buckets, total = histogram.cumulative()
    for le, count in buckets:
        yield Sample(f"{family.name}_bucket", {**labels, "le": le}, count)
    yield Sample(f"{family.name}_count", labels, buckets[-1][1])
    yield Sample(f"{family.name}_sum", labels, total)


@final
class _WorkqueueCollector(Collector):
    """Builds every workqueue sample from the live queues when the registry is scraped.

    Samples of one family may carry different label sets (``name`` for standalone queues,
    ``name`` and ``controller`` for controllers' queues), which the exposition formats allow.
    """

    def __init__(self, queues: weakref.WeakValueDictionary[str, _PrometheusQueueMetrics]) -> None:
        self._queues = queues

    def collect(self) -> Iterator[Metric]:
        depth = _family("workqueue_depth", "depth", "gauge")
        adds = _family("workqueue_adds", "adds", "counter")
        queue_duration = _family("workqueue_queue_duration_seconds", "queue_duration", "histogram")
        work_duration = _family("workqueue_work_duration_seconds", "work_duration", "histogram")
        unfinished = _family("workqueue_unfinished_work_seconds", "unfinished", "gauge")
        longest = _family("workqueue_longest_running_processor_seconds", "longest", "gauge")
        retries = _family("workqueue_retries", "retries", "counter")
        delayed = _family("kcm_workqueue_delayed_items", "delayed", "gauge")
        next_delayed = _family("kcm_workqueue_next_delayed_seconds", "next_delayed", "gauge")
        for _name, queue in sorted(self._queues.items()):
            labels = queue.labels
            depth.samples.append(Sample(depth.name, labels, queue.depth))
            adds.samples.append(Sample("workqueue_adds_total", labels, queue.adds))
            retries.samples.append(Sample("workqueue_retries_total", labels, queue.retries))
            queue_duration.samples.extend(
                _histogram_samples(queue_duration, labels, queue.queue_duration)
            )
            work_duration.samples.extend(
                _histogram_samples(work_duration, labels, queue.work_duration)
            )
            total_age, oldest = queue.in_flight()
            unfinished.samples.append(Sample(unfinished.name, labels, total_age))
            longest.samples.append(Sample(longest.name, labels, oldest))
            delayed.samples.append(Sample(delayed.name, labels, queue.waiting))
            next_delayed.samples.append(Sample(next_delayed.name, labels, queue.next_delayed()))
        yield from (depth, adds, queue_duration, work_duration, unfinished, longest, retries)
        yield from (delayed, next_delayed)

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

    One provider serves any number of queues. Metric names: ``workqueue_depth``,
    ``workqueue_adds_total``, ``workqueue_queue_duration_seconds``,
    ``workqueue_work_duration_seconds``, ``workqueue_unfinished_work_seconds``,
    ``workqueue_longest_running_processor_seconds``, ``workqueue_retries_total``.

    A queue built with the provider itself (or ``metrics=registry``) reports as client-go's
    component-base: label ``name``, histogram ``buckets``. One built with
    :meth:`for_controllers` (what :class:`kcm.runtime.Controller` does) reports as
    controller-runtime: labels ``name`` and ``controller`` (both the queue's name) and
    ``controller_buckets``. Both kinds share the metric names in one registry.

    Queues only bump plain counters; every sample (including the two in-flight gauges, which
    client-go refreshes on a 500 ms ticker) is computed when the registry is scraped.

    Args:
        registry: where the metrics are registered (one provider per registry).
        buckets: histogram buckets in seconds of standalone queues (default: component-base's
            ``ExponentialBuckets(1e-8, 10, 10)``, 10 ns .. 10 s; also
            ``PrometheusMetrics.default_buckets``).
        controller_buckets: the same for controllers' queues (default: controller-runtime's
            ``ExponentialBuckets(10e-9, 10, 12)``, 10 ns .. 1000 s; also
            ``PrometheusMetrics.controller_buckets``).

    Raises:
        ValueError: from prometheus-client if the registry already has these metric names.
    """

    default_buckets: ClassVar[tuple[float, ...]] = DEFAULT_BUCKETS
    controller_buckets: ClassVar[tuple[float, ...]] = CONTROLLER_BUCKETS

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        buckets: Sequence[float] = DEFAULT_BUCKETS,
        controller_buckets: Sequence[float] = CONTROLLER_BUCKETS,
    ) -> None:
        self._buckets = tuple(buckets)
        self._controller_buckets = tuple(controller_buckets)
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
        """Metrics for the standalone queue ``name`` (label ``name``, client-go's buckets).

        Raises:
            ValueError: a live queue already reports under ``name`` (samples would collide).
        """
        return self._register(name, clock, self._buckets, None)

    def controller_queue_metrics(self, name: str, clock: Clock) -> QueueMetrics:
        """Metrics for the queue of controller ``name`` (labels ``name`` and ``controller``,
        controller-runtime's buckets), so controller-runtime dashboards work unchanged.

        Raises:
            ValueError: a live queue already reports under ``name``.
        """
        return self._register(name, clock, self._controller_buckets, name)

    def for_controllers(self) -> MetricsProvider:
        """A provider whose ``queue_metrics`` is :meth:`controller_queue_metrics`: pass it as a
        controller's queue ``metrics=``."""
        return _ControllerProvider(self)

    def _register(
        self, name: str, clock: Clock, buckets: tuple[float, ...], controller: str | None
    ) -> QueueMetrics:
        if name in self._queues:
            raise ValueError(f"a workqueue named {name!r} already reports to this registry")
        metrics = _PrometheusQueueMetrics(name, clock, buckets, controller)
        self._queues[name] = metrics
        return metrics


@final
class _ControllerProvider:
    """:class:`PrometheusMetrics` seen as a provider for controllers' queues."""

    __slots__ = ("_provider",)

    def __init__(self, provider: PrometheusMetrics) -> None:
        self._provider = provider

    def queue_metrics(self, name: str, clock: Clock) -> QueueMetrics:
        return self._provider.controller_queue_metrics(name, clock)


_BY_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, PrometheusMetrics] = (
    weakref.WeakKeyDictionary()
)

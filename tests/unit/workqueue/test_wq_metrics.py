"""client-go's workqueue metrics (M1-M2), per-queue registries, scrape-time in-flight gauges."""

from __future__ import annotations

import gc
from collections.abc import Hashable

import pytest
from prometheus_client import CollectorRegistry

from kcm.clock import Clock
from kcm.testing import FakeClock
from kcm.workqueue import PrometheusMetrics, Queue, QueueMetrics, RateLimitingQueue

pytestmark = pytest.mark.anyio


def sample(registry: CollectorRegistry, metric: str, name: str = "q") -> float | None:
    return registry.get_sample_value(metric, {"name": name})


async def test_depth_adds_and_durations_follow_client_go() -> None:
    clock = FakeClock()
    reg = CollectorRegistry()
    q = Queue[str](name="q", clock=clock, metrics=reg)
    q.add("a")
    q.add("a")  # merged: not counted
    assert sample(reg, "workqueue_adds_total") == 1
    assert sample(reg, "workqueue_depth") == 1
    await clock.advance(2)
    item = await q.get()
    assert sample(reg, "workqueue_depth") == 0
    assert sample(reg, "workqueue_queue_duration_seconds_sum") == pytest.approx(2)
    assert sample(reg, "workqueue_queue_duration_seconds_count") == 1
    bucket = "workqueue_queue_duration_seconds_bucket"
    assert reg.get_sample_value(bucket, {"name": "q", "le": "1.0"}) == 0
    assert reg.get_sample_value(bucket, {"name": "q", "le": "10.0"}) == 1
    assert reg.get_sample_value(bucket, {"name": "q", "le": "+Inf"}) == 1
    q.add("a")  # dirty while processing counts in depth
    assert sample(reg, "workqueue_depth") == 1
    assert sample(reg, "workqueue_adds_total") == 2
    await clock.advance(3)
    q.done(item)
    assert sample(reg, "workqueue_work_duration_seconds_sum") == pytest.approx(3)
    assert sample(reg, "workqueue_depth") == 1  # requeued, still dirty
    await q.get()
    # The re-add happened 3 s before it was taken.
    assert sample(reg, "workqueue_queue_duration_seconds_sum") == pytest.approx(5)


async def test_in_flight_gauges_are_computed_at_scrape_time() -> None:
    clock = FakeClock()
    reg = CollectorRegistry()
    q = Queue[str](name="q", clock=clock, metrics=reg)
    assert sample(reg, "workqueue_unfinished_work_seconds") == 0
    assert sample(reg, "workqueue_longest_running_processor_seconds") == 0
    q.add("a")
    q.add("b")
    await q.get()
    await clock.advance(10)
    await q.get()
    await clock.advance(5)
    assert sample(reg, "workqueue_unfinished_work_seconds") == pytest.approx(15 + 5)
    assert sample(reg, "workqueue_longest_running_processor_seconds") == pytest.approx(15)
    q.done("a")
    assert sample(reg, "workqueue_longest_running_processor_seconds") == pytest.approx(5)


async def test_retries_count_every_add_after() -> None:
    clock = FakeClock()
    reg = CollectorRegistry()
    async with RateLimitingQueue[str](name="q", clock=clock, metrics=reg) as q:
        q.add_after("a", 0)
        q.add_after("b", 5)
        q.add_rate_limited("c")
        assert sample(reg, "workqueue_retries_total") == 3


async def test_queues_share_a_registry_under_their_own_names() -> None:
    reg = CollectorRegistry()
    provider = PrometheusMetrics(reg)
    assert PrometheusMetrics.for_registry(reg) is provider
    one = Queue[str](name="one", metrics=provider)
    two = Queue[str](name="two", metrics=provider)
    one.add("x")
    two.add("x")
    two.add("y")
    assert sample(reg, "workqueue_depth", "one") == 1
    assert sample(reg, "workqueue_depth", "two") == 2
    with pytest.raises(ValueError, match="already reports"):
        Queue[str](name="one", metrics=provider)
    del one
    gc.collect()
    assert sample(reg, "workqueue_depth", "one") is None  # a dead queue's series go away
    Queue[str](name="one", metrics=provider)  # and its name is free again
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        PrometheusMetrics(reg)  # a second provider on one registry is refused


async def test_registry_shorthand_reuses_one_provider() -> None:
    reg = CollectorRegistry()
    queues = [Queue[str](name=n, metrics=reg) for n in ("a", "b")]
    for q in queues:
        q.add("x")
    assert PrometheusMetrics.for_registry(reg) is PrometheusMetrics.for_registry(reg)
    assert sample(reg, "workqueue_adds_total", "a") == 1
    assert sample(reg, "workqueue_adds_total", "b") == 1


async def test_custom_provider_protocol() -> None:
    events: list[tuple[str, Hashable]] = []

    class Recorder:
        def add(self, item: Hashable) -> None:
            events.append(("add", item))

        def get(self, item: Hashable) -> None:
            events.append(("get", item))

        def done(self, item: Hashable) -> None:
            events.append(("done", item))

        def retry(self) -> None:
            events.append(("retry", None))

    class Provider:
        def queue_metrics(self, name: str, clock: Clock) -> QueueMetrics:
            return Recorder()

    q = Queue[str](name="q", metrics=Provider())
    q.add("a")
    q.done(await q.get())
    assert events == [("add", "a"), ("get", "a"), ("done", "a")]


async def test_no_metrics_means_no_registry_entries() -> None:
    reg = CollectorRegistry()
    q = Queue[str](name="q")
    q.add("a")
    assert sample(reg, "workqueue_adds_total") is None
    assert q._metrics is None

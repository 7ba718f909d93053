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


async def test_delayed_keys_and_the_next_due_are_reported() -> None:
    """kcm's own gauges: how many keys wait for a delay and when the first is due (what a
    test harness needs to tell idle from "a requeue fires in a moment")."""
    clock = FakeClock()
    reg = CollectorRegistry()
    async with RateLimitingQueue[str](name="q", clock=clock, metrics=reg) as q:
        assert sample(reg, "kcm_workqueue_delayed_items") == 0
        assert sample(reg, "kcm_workqueue_next_delayed_seconds") == float("inf")
        q.add_after("a", 5)
        q.add_after("b", 8)
        q.add_after("b", 3)  # moved earlier: still one key
        assert sample(reg, "kcm_workqueue_delayed_items") == 2
        assert sample(reg, "kcm_workqueue_next_delayed_seconds") == pytest.approx(3)
        await clock.advance(1)
        assert sample(reg, "kcm_workqueue_next_delayed_seconds") == pytest.approx(2)
        await clock.advance(2)
        assert await q.get() == "b"
        assert sample(reg, "kcm_workqueue_delayed_items") == 1
        assert sample(reg, "kcm_workqueue_next_delayed_seconds") == pytest.approx(2)
        q.shut_down()
        assert sample(reg, "kcm_workqueue_delayed_items") == 0
        assert sample(reg, "kcm_workqueue_next_delayed_seconds") == float("inf")


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


async def test_controller_queues_carry_controller_runtime_labels_and_buckets() -> None:
    clock = FakeClock()
    reg = CollectorRegistry()
    provider = PrometheusMetrics.for_registry(reg)
    standalone = Queue[str](name="gc", clock=clock, metrics=provider)
    controller = Queue[str](name="rs", clock=clock, metrics=provider.for_controllers())
    for q in (standalone, controller):
        q.add("a")
        await clock.advance(500)
        q.done(await q.get())
    families = {m.name: m for m in reg.collect()}
    assert set(families) == {
        "workqueue_depth",
        "workqueue_adds",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries",
        "kcm_workqueue_delayed_items",
        "kcm_workqueue_next_delayed_seconds",
    }
    label_sets = {
        name: sorted({tuple(sorted(k for k in s.labels if k != "le")) for s in m.samples})
        for name, m in families.items()
    }
    # client-go's component-base: name; controller-runtime: name and controller (M3).
    assert set(map(tuple, label_sets.values())) == {(("controller", "name"), ("name",))}
    rs = {"name": "rs", "controller": "rs"}
    assert reg.get_sample_value("workqueue_adds_total", rs) == 1
    assert reg.get_sample_value("workqueue_adds_total", {"name": "gc"}) == 1
    assert reg.get_sample_value("workqueue_depth", rs) == 0

    def les(queue: str) -> list[str]:
        return [
            s.labels["le"]
            for s in families["workqueue_queue_duration_seconds"].samples
            if s.name.endswith("_bucket") and s.labels["name"] == queue
        ]

    decades = ["1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1.0"]
    assert les("gc") == [*decades, "10.0", "+Inf"]  # ExponentialBuckets(1e-8, 10, 10)
    assert les("rs") == [*decades, "10.0", "100.0", "1000.0", "+Inf"]  # (10e-9, 10, 12)
    bucket = "workqueue_queue_duration_seconds_bucket"
    assert reg.get_sample_value(bucket, {**rs, "le": "100.0"}) == 0  # waited 500 s
    assert reg.get_sample_value(bucket, {**rs, "le": "1000.0"}) == 1
    assert PrometheusMetrics.controller_buckets[-1] == 1000.0
    with pytest.raises(ValueError, match="already reports"):
        Queue[str](name="gc", metrics=provider.for_controllers())  # names stay unique


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

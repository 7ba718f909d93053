"""EventBroadcaster, EventCorrelator and recorders against an in-memory sink on a FakeClock."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from kcm.errors import Forbidden, InternalError, Invalid, NotFound, ServiceUnavailable, StatusCause
from kcm.models import PartialObjectMetadata, Unstructured
from kcm.models.core_v1 import ConfigMap, Event, Node, ObjectReference
from kcm.models.meta_v1 import ObjectMeta
from kcm.record import EventBroadcaster, EventCorrelator, EventRecorder, EventSink, object_reference
from kcm.testing import FakeClock, FakeRecorder

pytestmark = pytest.mark.anyio

CM = ConfigMap(
    metadata=ObjectMeta(name="web", namespace="prod", uid="u-1", resource_version="7"),
)


class MemorySink:
    """Stores Events by (namespace, name); ``failures`` are raised by the next writes."""

    def __init__(self) -> None:
        self.events: dict[tuple[str, str], Event] = {}
        self.calls: list[str] = []
        self.failures: list[Exception] = []
        self._rv = 0

    def _fail(self) -> None:
        if self.failures:
            raise self.failures.pop(0)

    async def create(self, event: Event) -> Event:
        self.calls.append("create")
        self._fail()
        assert event.metadata.resource_version is None
        key = (event.metadata.namespace or "", event.metadata.name or "")
        self._rv += 1
        stored = msgspec.structs.replace(
            event, metadata=msgspec.structs.replace(event.metadata, resource_version=str(self._rv))
        )
        self.events[key] = stored
        return stored

    async def patch(self, event: Event, patch: dict[str, Any]) -> Event:
        self.calls.append("patch")
        self._fail()
        key = (event.metadata.namespace or "", event.metadata.name or "")
        if key not in self.events:
            raise NotFound(f"events {key[1]!r} not found")
        assert set(patch) <= {"count", "lastTimestamp", "message"}
        old = self.events[key]
        self._rv += 1
        self.events[key] = msgspec.structs.replace(
            old,
            count=patch["count"],
            message=patch.get("message", old.message),
            last_timestamp=event.last_timestamp,
            metadata=msgspec.structs.replace(old.metadata, resource_version=str(self._rv)),
        )
        return self.events[key]

    def only(self) -> Event:
        assert len(self.events) == 1, self.events
        return next(iter(self.events.values()))


@asynccontextmanager
async def running(
    sink: MemorySink, clock: FakeClock, **kwargs: Any
) -> AsyncIterator[tuple[EventBroadcaster, EventRecorder]]:
    broadcaster = EventBroadcaster(None, clock=clock, sink=sink, **kwargs)
    async with anyio.create_task_group() as tg:
        await tg.start(broadcaster.run)
        yield broadcaster, broadcaster.recorder("test-controller", host="node-1")
        tg.cancel_scope.cancel()


async def settle(broadcaster: EventBroadcaster) -> None:
    with anyio.fail_after(5):
        await broadcaster.wait_idle()


def test_the_sink_satisfies_the_protocol() -> None:
    sink: EventSink = MemorySink()
    assert sink is not None


async def test_an_event_names_its_object_and_source() -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, recorder):
        assert isinstance(recorder, EventRecorder)
        recorder.event(CM, "Normal", "Created", "created web")
        await settle(broadcaster)
    event = sink.only()
    assert event.involved_object == ObjectReference(
        api_version="v1", kind="ConfigMap", namespace="prod", name="web", uid="u-1",
        resource_version="7",
    )  # fmt: skip
    assert event.metadata.namespace == "prod"
    name = event.metadata.name or ""
    assert name.startswith("web.")
    assert int(name.removeprefix("web."), 16) > 0
    assert (event.type, event.reason, event.message, event.count) == (
        "Normal",
        "Created",
        "created web",
        1,
    )
    assert event.source is not None
    assert (event.source.component, event.source.host) == ("test-controller", "node-1")
    assert (event.reporting_component, event.reporting_instance) == ("test-controller", "node-1")
    assert event.first_timestamp == event.last_timestamp == clock.now()


async def test_cluster_scoped_and_unstructured_objects() -> None:
    sink, clock = MemorySink(), FakeClock()
    node = Node(metadata=ObjectMeta(name="n1", uid="u-n"))
    widget = Unstructured.from_dict(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "a"},
        }
    )
    async with running(sink, clock) as (broadcaster, recorder):
        recorder.event(node, "Warning", "NotReady", "node is not ready")
        recorder.event(widget, "Normal", "Synced", "ok")
        await settle(broadcaster)
    by_kind = {e.involved_object.kind: e for e in sink.events.values() if e.involved_object}
    assert by_kind["Node"].metadata.namespace == "default"
    assert by_kind["Node"].involved_object == ObjectReference(
        api_version="v1", kind="Node", name="n1", uid="u-n"
    )
    assert by_kind["Widget"].metadata.namespace == "a"
    assert by_kind["Widget"].involved_object is not None
    assert by_kind["Widget"].involved_object.api_version == "example.com/v1"


def test_object_reference_of_each_shape() -> None:
    ref = ObjectReference(api_version="v1", kind="Pod", name="p", namespace="x")
    assert object_reference(ref) is ref
    partial = PartialObjectMetadata(
        api_version="apps/v1", kind="Deployment", metadata=ObjectMeta(name="d", namespace="n")
    )
    assert object_reference(partial) == ObjectReference(
        api_version="apps/v1", kind="Deployment", name="d", namespace="n"
    )
    with pytest.raises(ValueError, match=r"needs metadata\.name"):
        object_reference(ConfigMap())
    with pytest.raises(ValueError, match="kind"):
        object_reference(PartialObjectMetadata(metadata=ObjectMeta(name="x")))


async def test_a_repeat_patches_count_and_last_timestamp() -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, recorder):
        recorder.event(CM, "Warning", "Failed", "boom")
        await settle(broadcaster)
        first = sink.only()
        await clock.advance(30)
        recorder.event(CM, "Warning", "Failed", "boom")
        recorder.event(CM, "Warning", "Failed", "boom")
        await settle(broadcaster)
    event = sink.only()
    assert sink.calls == ["create", "patch", "patch"]
    assert event.metadata.name == first.metadata.name
    assert event.count == 3
    assert event.first_timestamp == first.first_timestamp
    assert event.last_timestamp == clock.now()


async def test_a_deleted_event_is_created_again() -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, recorder):
        recorder.event(CM, "Normal", "Synced", "ok")
        await settle(broadcaster)
        sink.events.clear()  # an admin (or the TTL) deleted it
        recorder.event(CM, "Normal", "Synced", "ok")
        await settle(broadcaster)
    assert sink.calls == ["create", "patch", "create"]
    assert sink.only().count == 2


async def test_similar_events_are_aggregated() -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, recorder):
        for i in range(11):
            recorder.event(CM, "Warning", "FailedCreate", f"attempt {i} failed")
        await settle(broadcaster)
    messages = sorted(e.message or "" for e in sink.events.values())
    assert len(sink.events) == 10  # 9 individual events, then one aggregate
    aggregated = [e for e in sink.events.values() if (e.message or "").startswith("(combined")]
    assert len(aggregated) == 1
    assert aggregated[0].message == "(combined from similar events): attempt 10 failed"
    assert aggregated[0].count == 2
    assert [m for m in messages if not m.startswith("(combined")] == sorted(
        f"attempt {i} failed" for i in range(9)
    )


async def test_aggregation_restarts_after_a_quiet_interval() -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, recorder):
        for i in range(9):
            recorder.event(CM, "Warning", "FailedCreate", f"a{i}")
        await settle(broadcaster)
        await clock.advance(601)
        for i in range(9):
            recorder.event(CM, "Warning", "FailedCreate", f"b{i}")
        await settle(broadcaster)
    assert not any((e.message or "").startswith("(combined") for e in sink.events.values())
    assert len(sink.events) == 18


async def test_the_spam_filter_allows_a_burst_then_one_per_five_minutes() -> None:
    sink, clock = MemorySink(), FakeClock()
    registry = CollectorRegistry()
    async with running(sink, clock, registry=registry) as (broadcaster, recorder):
        for i in range(30):
            recorder.event(CM, "Normal", f"Step{i}", "step")  # distinct reasons: no aggregation
        await settle(broadcaster)
        assert len(sink.events) == 25
        await clock.advance(299)
        recorder.event(CM, "Normal", "Late0", "x")
        await settle(broadcaster)
        assert len(sink.events) == 25
        await clock.advance(1)
        recorder.event(CM, "Normal", "Late1", "x")
        recorder.event(CM, "Normal", "Late2", "x")
        await settle(broadcaster)
        assert len(sink.events) == 26
        assert {e.reason for e in sink.events.values()} >= {"Late1"}
        # another object has its own bucket
        other = msgspec.structs.replace(CM, metadata=ObjectMeta(name="db", namespace="prod"))
        recorder.event(other, "Normal", "Step0", "step")
        await settle(broadcaster)
        assert len(sink.events) == 27
    dropped = registry.get_sample_value("kcm_events_dropped_total", {"reason": "spam_filtered"})
    assert dropped == 30 - 25 + 1 + 1
    assert registry.get_sample_value("kcm_events_written_total", {"verb": "create"}) == 27


async def test_a_full_buffer_drops_without_blocking(caplog: pytest.LogCaptureFixture) -> None:
    sink, clock = MemorySink(), FakeClock()
    registry = CollectorRegistry()
    broadcaster = EventBroadcaster(None, clock=clock, sink=sink, queue_size=3, registry=registry)
    recorder = broadcaster.recorder("c")
    for i in range(5):  # synchronous: returns at once although nothing takes events yet
        recorder.event(CM, "Normal", f"R{i}", "m")
    assert (broadcaster.pending, broadcaster.dropped) == (3, 2)
    overflow = [r for r in caplog.records if "too many queued events" in r.getMessage()]
    assert [r.levelno for r in overflow] == [logging.ERROR]  # once per episode, not per event
    assert registry.get_sample_value("kcm_events_dropped_total", {"reason": "queue_full"}) == 2
    async with anyio.create_task_group() as tg:
        await tg.start(broadcaster.run)
        await settle(broadcaster)
        tg.cancel_scope.cancel()
    assert sorted(e.reason or "" for e in sink.events.values()) == ["R0", "R1", "R2"]


async def test_invalid_events_are_dropped_and_never_raise(caplog: pytest.LogCaptureFixture) -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, recorder):
        recorder.event(CM, "Error", "Bad", "type must be Normal or Warning")
        recorder.event(CM, "Normal", "", "empty reason")
        recorder.event(CM, "Normal", "R" * 129, "reason too long")
        recorder.event(None, "Normal", "NoObject", "not an object")
        recorder.event(ConfigMap(), "Normal", "NoName", "object without a name")
        recorder.event(CM, "Normal", "Fine", "ok")
        await settle(broadcaster)
    assert [e.reason for e in sink.events.values()] == ["Fine"]
    assert "unsupported event type 'Error'" in caplog.text
    assert broadcaster.dropped == 0  # only buffer overflows count there


async def test_a_failed_write_is_retried_then_succeeds() -> None:
    sink, clock = MemorySink(), FakeClock()
    sink.failures = [InternalError("boom"), ServiceUnavailable("later")]
    times: list[float] = []
    create = sink.create

    async def timed_create(event: Event) -> Event:
        times.append(clock.monotonic())
        return await create(event)

    sink.create = timed_create  # type: ignore[method-assign]
    async with running(sink, clock, retry_interval=10.0) as (broadcaster, recorder):
        recorder.event(CM, "Normal", "Created", "x")
        await clock.advance(0)
        assert sink.calls == ["create"]
        await clock.run_until_idle()
        await settle(broadcaster)
    assert sink.calls == ["create"] * 3
    assert 0 <= times[1] - times[0] < 10  # the first wait is randomised in [0, interval)
    assert times[2] - times[1] == pytest.approx(10)
    assert sink.only().reason == "Created"


async def test_a_write_gives_up_after_max_tries(caplog: pytest.LogCaptureFixture) -> None:
    sink, clock = MemorySink(), FakeClock()
    sink.failures = [ServiceUnavailable("down")] * 3
    registry = CollectorRegistry()
    async with running(sink, clock, max_tries=3, registry=registry) as (broadcaster, recorder):
        recorder.event(CM, "Normal", "Lost", "x")
        recorder.event(CM, "Normal", "Kept", "y")
        await clock.advance(30)
        await settle(broadcaster)
    assert sink.calls == ["create"] * 4
    assert [e.reason for e in sink.events.values()] == ["Kept"]
    assert "gave up after 3 tries" in caplog.text
    assert registry.get_sample_value("kcm_events_dropped_total", {"reason": "write_failed"}) == 1


async def test_a_rejected_write_is_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    sink, clock = MemorySink(), FakeClock()
    terminating = Forbidden("ns terminating", causes=[StatusCause(reason="NamespaceTerminating")])
    sink.failures = [Invalid("bad event"), terminating]
    async with running(sink, clock) as (broadcaster, recorder):
        with caplog.at_level(logging.DEBUG, logger="kcm.record"):
            recorder.event(CM, "Normal", "A", "x")
            recorder.event(CM, "Normal", "B", "x")
            recorder.event(CM, "Normal", "C", "x")
            await settle(broadcaster)
    assert sink.calls == ["create"] * 3
    assert [e.reason for e in sink.events.values()] == ["C"]
    levels = {r.levelno for r in caplog.records if "server rejected event" in r.getMessage()}
    assert levels == {logging.ERROR, logging.DEBUG}


async def test_events_are_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    sink, clock = MemorySink(), FakeClock()
    with caplog.at_level(logging.DEBUG, logger="kcm.record"):
        async with running(sink, clock) as (broadcaster, recorder):
            recorder.event(CM, "Warning", "Slow", "took 3s")
            await settle(broadcaster)
    assert "Event(ConfigMap prod/web): type: 'Warning' reason: 'Slow' took 3s" in caplog.text


async def test_names_are_unique_on_a_frozen_clock() -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, recorder):
        for i in range(5):
            recorder.event(CM, "Normal", f"R{i}", "m")
        await settle(broadcaster)
    assert len({name for _, name in sink.events}) == 5


async def test_long_object_names_stay_valid() -> None:
    sink, clock = MemorySink(), FakeClock()
    long = ConfigMap(metadata=ObjectMeta(name="x" * 253, namespace="a"))
    async with running(sink, clock) as (broadcaster, recorder):
        recorder.event(long, "Normal", "R", "m")
        await settle(broadcaster)
    assert len(sink.only().metadata.name or "") == 253


async def test_cancelling_run_writes_what_is_buffered() -> None:
    sink, clock = MemorySink(), FakeClock()
    broadcaster = EventBroadcaster(None, clock=clock, sink=sink)
    recorder = broadcaster.recorder("c")
    with anyio.CancelScope() as scope:
        scope.cancel()
        recorder.event(CM, "Normal", "Stopping", "bye")
        await broadcaster.run()
    assert [e.reason for e in sink.events.values()] == ["Stopping"]
    assert broadcaster.pending == 0


async def test_a_second_concurrent_run_is_refused() -> None:
    sink, clock = MemorySink(), FakeClock()
    async with running(sink, clock) as (broadcaster, _):
        with pytest.raises(RuntimeError, match="already running"):
            await broadcaster.run()


def test_constructor_and_recorder_validation() -> None:
    with pytest.raises(ValueError, match="client or a sink"):
        EventBroadcaster(None)
    broadcaster = EventBroadcaster(None, sink=MemorySink())
    with pytest.raises(ValueError, match="component"):
        broadcaster.recorder("")
    with pytest.raises(ValueError):
        EventCorrelator(spam_burst=0)
    assert "test" in repr(broadcaster.recorder("test"))


def test_correlator_directly() -> None:
    clock = FakeClock()
    correlator = EventCorrelator(clock=clock, spam_burst=2, aggregate_max_events=3)
    base = Event(
        metadata=ObjectMeta(name="web.1", namespace="prod"),
        involved_object=object_reference(CM),
        type="Normal",
        reason="R",
        message="m",
        count=1,
    )
    first = correlator.correlate(base)
    assert first.patch is None
    assert first.event is not None
    stored = msgspec.structs.replace(
        first.event, metadata=msgspec.structs.replace(first.event.metadata, resource_version="5")
    )
    correlator.update_state(first.key, stored)
    again = correlator.correlate(msgspec.structs.replace(base, metadata=ObjectMeta(name="web.2")))
    assert again.event is not None
    assert again.patch == {"count": 2, "message": "m"}
    assert again.event.metadata.name == "web.1"
    assert again.event.metadata.resource_version == "5"
    assert correlator.correlate(base).skip  # burst of 2 used up


def test_fake_recorder() -> None:
    recorder = FakeRecorder()
    typed: EventRecorder = recorder  # mypy: FakeRecorder satisfies the protocol statically
    assert isinstance(typed, EventRecorder)
    recorder.event(CM, "Normal", "Created", "created web")
    recorder.event(CM, "Warning", "Failed", "oops")
    assert recorder.events == ["Normal Created created web", "Warning Failed oops"]
    assert recorder.objects == [CM, CM]
    with pytest.raises(ValueError, match="Normal"):
        recorder.event(CM, "Info", "X", "y")
    with pytest.raises(ValueError, match="reason"):
        recorder.event(CM, "Normal", "", "y")
    lenient = FakeRecorder(strict=False)
    lenient.event(CM, "Info", "X", "y")
    assert lenient.events == ["Info X y"]
    recorder.clear()
    assert recorder.events == []
    assert "0 events" in repr(recorder)


async def test_recording_never_waits_for_a_hanging_write() -> None:
    sink, clock = MemorySink(), FakeClock()
    release = anyio.Event()
    create = sink.create

    async def hanging_create(event: Event) -> Event:
        await release.wait()
        return await create(event)

    sink.create = hanging_create  # type: ignore[method-assign]
    async with running(sink, clock, queue_size=5) as (broadcaster, recorder):
        recorder.event(CM, "Normal", "First", "m")
        await clock.advance(0)  # run() took it and hangs in create()
        for i in range(20):  # synchronous: nothing here can wait for the hanging write
            recorder.event(CM, "Normal", f"R{i}", "m")
        assert (broadcaster.pending, broadcaster.dropped) == (5, 15)
        release.set()
        await settle(broadcaster)
    assert sorted(e.reason or "" for e in sink.events.values()) == sorted(
        ["First", "R0", "R1", "R2", "R3", "R4"]
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["A", "B"]), st.integers(0, 14), st.sampled_from([0, 5, 700])),
        max_size=80,
    )
)
def test_every_recorded_event_is_counted_exactly_once(
    steps: list[tuple[str, int, int]],
) -> None:
    """With the spam filter out of the way, the counts of the stored Events add up to the
    number of events recorded: each one created an Event or counted up exactly one."""
    clock = FakeClock()
    correlator = EventCorrelator(clock=clock, spam_burst=10_000)
    stored: dict[str, Event] = {}
    for i, (reason, message, pause) in enumerate(steps):
        clock._now += pause  # the correlator only reads the clock
        event = Event(
            metadata=ObjectMeta(name=f"web.{i:x}", namespace="prod"),
            involved_object=object_reference(CM),
            type="Warning",
            reason=reason,
            message=f"m{message}",
            count=1,
            first_timestamp=clock.now(),
            last_timestamp=clock.now(),
        )
        result = correlator.correlate(event)
        assert not result.skip
        assert result.event is not None
        name = result.event.metadata.name or ""
        if result.patch is None:
            assert name not in stored
            stored[name] = result.event
        else:
            assert result.patch["count"] == stored[name].count + 1  # type: ignore[operator]
            stored[name] = msgspec.structs.replace(stored[name], count=result.patch["count"])
        correlator.update_state(result.key, stored[name])
    assert sum(e.count or 0 for e in stored.values()) == len(steps)
    for e in stored.values():
        assert (e.count or 0) >= 1


async def test_shutdown_gives_up_on_a_hanging_server_after_the_timeout() -> None:
    sink, clock = MemorySink(), FakeClock()

    async def hanging_create(event: Event) -> Event:
        sink.calls.append("create")
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    sink.create = hanging_create  # type: ignore[method-assign]
    registry = CollectorRegistry()
    broadcaster = EventBroadcaster(
        None, clock=clock, sink=sink, shutdown_timeout=5, registry=registry
    )
    recorder = broadcaster.recorder("c")
    scope = anyio.CancelScope()
    stopped = anyio.Event()

    async def run() -> None:
        with scope:
            await broadcaster.run()
        stopped.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        for reason in ("InFlight", "Buffered1", "Buffered2"):
            recorder.event(CM, "Normal", reason, "m")
        await clock.advance(0)
        assert broadcaster.pending == 2  # InFlight hangs in create()
        scope.cancel()
        await clock.advance(4.9)
        assert not stopped.is_set()  # still trying Buffered1 (shielded)
        await clock.advance(0.1)
        with anyio.fail_after(5):
            await stopped.wait()
    assert broadcaster.pending == 0
    assert sink.calls == ["create", "create"]  # InFlight, then one try of Buffered1
    # cancelled mid-write (InFlight, Buffered1) or never tried (Buffered2): all counted
    assert registry.get_sample_value("kcm_events_dropped_total", {"reason": "write_failed"}) == 3


async def test_unexpected_errors_cost_one_event_not_the_broadcaster(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sink, clock = MemorySink(), FakeClock()
    sink.failures = [RuntimeError("sink bug")]
    correlator = EventCorrelator(clock=clock)
    correlate = correlator.correlate
    calls = 0

    def flaky_correlate(event: Event) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("correlator bug")
        return correlate(event)

    correlator.correlate = flaky_correlate  # type: ignore[method-assign]
    async with running(sink, clock, correlator=correlator) as (broadcaster, recorder):
        for reason in ("SinkBug", "CorrelatorBug", "Fine"):
            recorder.event(CM, "Normal", reason, "m")
        await settle(broadcaster)
    assert [e.reason for e in sink.events.values()] == ["Fine"]
    assert "sink bug" in caplog.text
    assert "correlator bug" in caplog.text


async def test_unwritten_events_are_a_gauge() -> None:
    """``kcm_events_pending``: events recorded and not yet written (a harness waits for 0)."""
    sink, clock = MemorySink(), FakeClock()
    registry = CollectorRegistry()
    broadcaster = EventBroadcaster(None, clock=clock, sink=sink, registry=registry)
    recorder = broadcaster.recorder("test-controller")
    recorder.event(CM, "Normal", "One", "x")
    recorder.event(CM, "Normal", "Two", "x")
    assert broadcaster.unwritten == 2
    assert registry.get_sample_value("kcm_events_pending") == 2
    async with anyio.create_task_group() as tg:
        await tg.start(broadcaster.run)
        await settle(broadcaster)
        assert registry.get_sample_value("kcm_events_pending") == 0
        tg.cancel_scope.cancel()
    assert len(sink.events) == 2

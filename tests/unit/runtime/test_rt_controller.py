"""Controller: outcome handling (C2), backoff on a fake clock, stinginess, shutdown, metrics."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest
from prometheus_client import CollectorRegistry

from kcm.errors import Conflict, Forbidden, NotFound
from kcm.informers import HandlerRegistration
from kcm.models import ObjectKey
from kcm.runtime import (
    Controller,
    ReconcileContext,
    ReconcileFunc,
    Request,
    Result,
    TerminalError,
    current_reconcile,
    is_terminal,
)
from kcm.testing import FakeClock
from kcm.workqueue import ItemExponentialFailureRateLimiter

pytestmark = pytest.mark.anyio

KEY = ObjectKey("default", "web")
Behaviour = Callable[[Request, int], Awaitable[Result]]


class Recorder:
    """A reconciler that records (time, key) per call and delegates to a behaviour."""

    def __init__(self, clock: FakeClock, behaviour: Behaviour) -> None:
        self.clock = clock
        self.behaviour = behaviour
        self.calls: list[tuple[float, Request]] = []

    async def reconcile(self, request: Request) -> Result:
        self.calls.append((self.clock.monotonic(), request))
        return await self.behaviour(request, len(self.calls))

    def times(self) -> list[float]:
        return [round(t - 1000.0, 6) for t, _ in self.calls]


@asynccontextmanager
async def running(controller: Controller[Any]) -> AsyncIterator[anyio.CancelScope]:
    """Run ``controller`` until the block ends; yields the scope that stops it."""
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def _run(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            with scope:
                await controller.run(task_status=task_status)

        await tg.start(_run)
        yield scope
        scope.cancel()


async def _fail(request: Request, n: int) -> Result:
    raise RuntimeError(f"boom {n}")


async def test_exception_requeues_with_exact_backoff(fake_clock: FakeClock) -> None:
    rec = Recorder(fake_clock, _fail)
    controller = Controller("c", rec, clock=fake_clock)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0)
        assert rec.times() == [0.0]
        await fake_clock.advance(0.0049)
        assert len(rec.calls) == 1
        await fake_clock.advance(0.0001)
        assert rec.times() == [0.0, 0.005]
        await fake_clock.advance(0.010)
        await fake_clock.advance(0.020)
        await fake_clock.advance(0.040)
        assert rec.times() == [0.0, 0.005, 0.015, 0.035, 0.075]
        assert controller.queue.num_requeues(KEY) == 5


async def test_terminal_error_is_not_requeued(fake_clock: FakeClock) -> None:
    async def terminal(request: Request, n: int) -> Result:
        raise ValueError("bad spec") from TerminalError("spec is invalid")

    registry = CollectorRegistry()
    rec = Recorder(fake_clock, terminal)
    controller = Controller("c", rec, clock=fake_clock, metrics=registry)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(2000)
        assert len(rec.calls) == 1
        assert controller.queue.waiting == 0
        assert controller.queue.num_requeues(KEY) == 0
    labels = {"controller": "c"}
    get = registry.get_sample_value
    assert get("controller_runtime_terminal_reconcile_errors_total", labels) == 1
    assert get("controller_runtime_reconcile_errors_total", labels) == 1
    assert get("controller_runtime_reconcile_total", {**labels, "result": "error"}) == 1


async def test_requeue_after_resets_backoff_and_waits_exactly(fake_clock: FakeClock) -> None:
    async def behaviour(request: Request, n: int) -> Result:
        if n <= 2:
            raise RuntimeError("transient")
        return Result(requeue_after=30.0) if n == 3 else Result()

    rec = Recorder(fake_clock, behaviour)
    controller = Controller("c", rec, clock=fake_clock)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0.015)  # two failures: 0 and 5 ms, success at 15 ms
        assert rec.times() == [0.0, 0.005, 0.015]
        assert controller.queue.num_requeues(KEY) == 0  # forgotten before add_after
        await fake_clock.advance(29.999)
        assert len(rec.calls) == 3
        await fake_clock.advance(0.001)
        assert rec.times() == [0.0, 0.005, 0.015, 30.015]
        await fake_clock.advance(1000)
        assert len(rec.calls) == 4  # Result(): done until the next event


async def test_requeue_true_uses_backoff_without_reset(fake_clock: FakeClock) -> None:
    async def behaviour(request: Request, n: int) -> Result:
        return Result(requeue=n <= 3)

    rec = Recorder(fake_clock, behaviour)
    controller = Controller("c", rec, clock=fake_clock)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(1)
        assert rec.times() == [0.0, 0.005, 0.015, 0.035]
        assert controller.queue.num_requeues(KEY) == 0  # the last, plain success forgot it


async def test_key_dirtied_during_reconcile_runs_once_more(fake_clock: FakeClock) -> None:
    release = anyio.Event()

    async def behaviour(request: Request, n: int) -> Result:
        if n == 1:
            await release.wait()
        return Result()

    rec = Recorder(fake_clock, behaviour)
    controller = Controller("c", rec, clock=fake_clock, max_concurrent_reconciles=3)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0)
        for _ in range(3):  # merged into one pending reconcile, held back while in flight
            controller.enqueue(KEY)
        await fake_clock.advance(0)
        assert len(rec.calls) == 1
        release.set()
        await fake_clock.advance(0)
        assert len(rec.calls) == 2
        await fake_clock.advance(10)
        assert len(rec.calls) == 2


async def test_never_concurrent_for_one_key(fake_clock: FakeClock) -> None:
    in_flight: dict[Request, int] = {}
    max_per_key = 0
    max_total = 0

    async def behaviour(request: Request, n: int) -> Result:
        nonlocal max_per_key, max_total
        in_flight[request] = in_flight.get(request, 0) + 1
        max_per_key = max(max_per_key, in_flight[request])
        max_total = max(max_total, sum(in_flight.values()))
        await fake_clock.sleep(1.0)
        in_flight[request] -= 1
        return Result()

    rec = Recorder(fake_clock, behaviour)
    controller = Controller("c", rec, clock=fake_clock, max_concurrent_reconciles=4)
    keys = [ObjectKey("default", f"k{i}") for i in range(3)]
    async with running(controller):
        for _ in range(5):
            for key in keys:
                controller.enqueue(key)
            await fake_clock.advance(0.5)
        await fake_clock.advance(10)
    assert max_per_key == 1
    assert max_total == 3  # the three keys did run in parallel
    for key in keys:  # first run, then one merged re-run per in-flight window
        assert 2 <= sum(1 for _, k in rec.calls if k == key) <= 4


async def test_exception_is_logged_with_the_key(
    fake_clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    rec = Recorder(fake_clock, _fail)
    controller = Controller("widgets", rec, clock=fake_clock)
    with caplog.at_level(logging.ERROR, logger="kcm.runtime"):
        async with running(controller):
            controller.enqueue(KEY)
            await fake_clock.advance(0)
    [record] = [r for r in caplog.records if r.name == "kcm.runtime._controller"]
    assert "default/web" in record.getMessage()
    assert "widgets" in record.getMessage()
    assert record.exc_info is not None
    assert "boom 1" in str(record.exc_info[1])
    assert record.__dict__["key"] == "default/web"


async def test_returning_not_a_result_is_an_error(fake_clock: FakeClock) -> None:
    async def wrong(request: Request, n: int) -> Result:
        return cast(Result, None)

    rec = Recorder(fake_clock, wrong)
    controller = Controller("c", rec, clock=fake_clock)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0.005)
        assert len(rec.calls) == 2


async def test_metrics(fake_clock: FakeClock) -> None:
    async def behaviour(request: Request, n: int) -> Result:
        await fake_clock.sleep(0.2)
        if n == 1:
            raise RuntimeError("once")
        return Result(requeue_after=60) if n == 2 else Result()

    registry = CollectorRegistry()
    controller = Controller(
        "m", Recorder(fake_clock, behaviour), clock=fake_clock, metrics=registry,
        max_concurrent_reconciles=2,
    )  # fmt: skip
    get = registry.get_sample_value
    labels = {"controller": "m"}
    assert get("controller_runtime_max_concurrent_reconciles", labels) == 2
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0.1)
        assert get("controller_runtime_active_workers", labels) == 1
        await fake_clock.advance(100)
    assert get("controller_runtime_active_workers", labels) == 0
    for result, count in [("error", 1), ("requeue_after", 1), ("success", 1), ("requeue", 0)]:
        assert get("controller_runtime_reconcile_total", {**labels, "result": result}) == count
    assert get("controller_runtime_reconcile_time_seconds_count", labels) == 3
    assert get("controller_runtime_reconcile_time_seconds_sum", labels) == pytest.approx(0.6)
    queue = {"name": "m", "controller": "m"}  # controller-runtime's labels (M3)
    assert get("workqueue_adds_total", queue) == 3
    assert get("workqueue_adds_total", {"name": "m"}) is None  # not client-go's label set
    assert get("workqueue_work_duration_seconds_count", queue) == 3
    # controller-runtime's buckets, ExponentialBuckets(10e-9, 10, 12): up to 1000 s.
    bucket = "workqueue_work_duration_seconds_bucket"
    assert get(bucket, {**queue, "le": "0.1"}) == 0  # each reconcile took 0.2 s
    assert get(bucket, {**queue, "le": "1.0"}) == 3
    assert get(bucket, {**queue, "le": "1000.0"}) == 3
    les = [
        s.labels["le"]
        for m in registry.collect()
        if m.name == "workqueue_queue_duration_seconds"
        for s in m.samples
        if s.name.endswith("_bucket")
    ]
    decades = ["1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1.0"]
    assert les == [*decades, "10.0", "100.0", "1000.0", "+Inf"]


async def test_graceful_shutdown_finishes_in_flight_reconcile(fake_clock: FakeClock) -> None:
    finished: list[Request] = []

    async def slow(request: Request, n: int) -> Result:
        await fake_clock.sleep(5)
        finished.append(request)
        return Result()

    controller = Controller("c", Recorder(fake_clock, slow), clock=fake_clock)
    other = ObjectKey("default", "other")
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def _run() -> None:
            with scope:
                await controller.run()

        tg.start_soon(_run)
        await fake_clock.advance(0)
        controller.enqueue(KEY)
        controller.enqueue(other)  # queued behind KEY: dropped at shutdown
        await fake_clock.advance(1)
        scope.cancel()
        await fake_clock.advance(0)
        assert controller.queue.shutting_down
        assert finished == []
        await fake_clock.advance(4)
    assert finished == [KEY]


async def test_shutdown_grace_expires_and_cancels(fake_clock: FakeClock) -> None:
    cancelled = False

    async def stuck(request: Request, n: int) -> Result:
        nonlocal cancelled
        try:
            await fake_clock.sleep(1000)
        except anyio.get_cancelled_exc_class():
            cancelled = True
            raise
        return Result()

    controller = Controller(
        "c", Recorder(fake_clock, stuck), clock=fake_clock, graceful_shutdown_timeout=30
    )
    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def _run() -> None:
            with scope:
                await controller.run()
            done.set()

        tg.start_soon(_run)
        await fake_clock.advance(0)
        controller.enqueue(KEY)
        await fake_clock.advance(1)
        scope.cancel()
        await fake_clock.advance(29.9)
        assert not done.is_set()
        assert not cancelled
        await fake_clock.advance(0.1)
        assert done.is_set()
        assert cancelled


async def test_idle_controller_stops_at_once(fake_clock: FakeClock) -> None:
    controller = Controller("c", Recorder(fake_clock, _fail), clock=fake_clock)
    with anyio.fail_after(5):
        async with running(controller):
            with pytest.raises(RuntimeError, match="already running"):
                await controller.run()


async def test_a_stopped_controller_runs_again_with_its_queue_reopened(
    fake_clock: FakeClock,
) -> None:
    async def ok(request: Request, n: int) -> Result:
        return Result()

    rec = Recorder(fake_clock, ok)
    registry = CollectorRegistry()
    controller = Controller("c", rec, clock=fake_clock, metrics=registry)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0)
    assert controller.queue.shutting_down
    controller.enqueue(KEY)  # ignored while stopped, as client-go's queue after shutdown
    async with running(controller):  # e.g. elected again after losing leadership
        assert not controller.queue.shutting_down
        controller.enqueue(KEY)
        await fake_clock.advance(0)
        controller.enqueue(ObjectKey("default", "later"))
        await fake_clock.advance(0)
    assert [key.name for _, key in rec.calls] == ["web", "web", "later"]
    assert (
        registry.get_sample_value("workqueue_adds_total", {"name": "c", "controller": "c"}) == 3
    )  # one metrics series across runs


async def test_a_requeue_after_and_a_backoff_pending_at_stop_survive_a_restart(
    fake_clock: FakeClock,
) -> None:
    async def behaviour(request: Request, n: int) -> Result:
        if request.name == "web" and n == 1:
            return Result(requeue_after=30)
        if request.name == "db" and n == 2:
            raise RuntimeError("first try of db fails")
        return Result()

    rec = Recorder(fake_clock, behaviour)
    controller = Controller(
        "c",
        rec,
        clock=fake_clock,
        rate_limiter=ItemExponentialFailureRateLimiter(50.0, 1000.0, clock=fake_clock),
    )
    db = ObjectKey("default", "db")
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0)
        controller.enqueue(db)
        await fake_clock.advance(0)
        assert rec.times() == [0, 0]
        assert controller.queue.waiting == 2  # web after 30 s, db after a 50 s backoff
    await fake_clock.advance(40)  # stopped (say, leadership lost) while web falls due
    assert rec.times() == [0, 0]
    async with running(controller):  # elected again
        await fake_clock.advance(0)
        calls = [(t, key.name) for t, (_, key) in zip(rec.times(), rec.calls, strict=True)]
        assert calls[2:] == [(40, "web")]  # overdue: reconciled at once
        await fake_clock.advance(10)
        calls = [(t, key.name) for t, (_, key) in zip(rec.times(), rec.calls, strict=True)]
        assert calls[3:] == [(50, "db")]  # the backoff kept its time
        assert controller.queue.num_requeues(db) == 0  # forgotten after its success


class _FakeRegistration:
    def __init__(self) -> None:
        self.has_synced = False
        self.event = anyio.Event()

    async def wait_synced(self) -> None:
        await self.event.wait()


async def test_waits_for_handler_sync_then_times_out(fake_clock: FakeClock) -> None:
    reg = _FakeRegistration()
    controller = Controller("c", Recorder(fake_clock, _fail), clock=fake_clock)
    controller.wait_for([cast(HandlerRegistration, reg)])
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake_clock.advance, 120)
        with pytest.raises(TimeoutError, match="did not sync within 120"):
            await controller.run()


async def test_starts_once_handlers_synced(fake_clock: FakeClock) -> None:
    reg = _FakeRegistration()
    rec = Recorder(fake_clock, _fail)
    controller = Controller("c", rec, clock=fake_clock)
    controller.wait_for([cast(HandlerRegistration, reg)])
    controller.enqueue(KEY)  # queued before start: reconciled once synced
    async with anyio.create_task_group() as tg:
        tg.start_soon(controller.run)
        await fake_clock.advance(10)
        assert rec.calls == []
        reg.has_synced = True
        reg.event.set()
        await fake_clock.advance(0)
        assert len(rec.calls) == 1
        tg.cancel_scope.cancel()


def test_result_and_terminal_helpers() -> None:
    with pytest.raises(ValueError, match="requeue_after"):
        Result(requeue_after=-1)
    assert Result() == Result(requeue=False, requeue_after=None)
    assert is_terminal(TerminalError("x"))
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = TerminalError("root")
    assert is_terminal(wrapped)
    assert not is_terminal(RuntimeError("plain"))
    assert is_terminal(ExceptionGroup("tg", [TerminalError("a"), wrapped]))
    assert not is_terminal(ExceptionGroup("tg", [TerminalError("a"), RuntimeError("b")]))
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        Controller("c", Recorder(FakeClock(), _fail), max_concurrent_reconciles=0)
    with pytest.raises(ValueError, match="non-empty name"):
        Controller("", Recorder(FakeClock(), _fail))
    registry = CollectorRegistry()
    first = Controller("dup", Recorder(FakeClock(), _fail), metrics=registry)
    with pytest.raises(ValueError, match="must be unique"):
        Controller("dup", Recorder(FakeClock(), _fail), metrics=registry)
    assert first.name == "dup"


async def test_reconcile_timeout_is_a_retried_error(fake_clock: FakeClock) -> None:
    async def slow_once(request: Request, n: int) -> Result:
        if n == 1:
            await fake_clock.sleep(100)
        return Result()

    registry = CollectorRegistry()
    rec = Recorder(fake_clock, slow_once)
    controller = Controller("t", rec, clock=fake_clock, reconcile_timeout=10, metrics=registry)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(9.9)
        assert len(rec.calls) == 1
        await fake_clock.advance(0.1)  # timed out: requeued after 5 ms
        await fake_clock.advance(0.005)
        assert rec.times() == [0.0, 10.005]
    get = registry.get_sample_value
    assert get("controller_runtime_reconcile_timeouts_total", {"controller": "t"}) == 1
    assert get("controller_runtime_reconcile_total", {"controller": "t", "result": "error"}) == 1
    assert get("controller_runtime_reconcile_total", {"controller": "t", "result": "success"}) == 1


async def test_current_reconcile_context(
    fake_clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[ReconcileContext | None] = []

    async def behaviour(request: Request, n: int) -> Result:
        seen.append(current_reconcile())
        raise RuntimeError("fail to log the id")

    assert current_reconcile() is None
    controller = Controller("ctx", Recorder(fake_clock, behaviour), clock=fake_clock)
    with caplog.at_level(logging.ERROR, logger="kcm.runtime"):
        async with running(controller):
            controller.enqueue(KEY)
            await fake_clock.advance(0.005)
    assert len(seen) == 2
    first, second = seen
    assert first is not None
    assert second is not None
    assert (first.controller, first.key) == ("ctx", KEY)
    assert first.reconcile_id != second.reconcile_id
    ids = [r.__dict__["reconcile_id"] for r in caplog.records if r.name.startswith("kcm.runtime")]
    assert ids == [first.reconcile_id, second.reconcile_id]


async def test_reconcile_func(fake_clock: FakeClock) -> None:
    seen: list[Request] = []

    async def reconcile(request: Request) -> Result:
        seen.append(request)
        return Result()

    controller = Controller("f", ReconcileFunc(reconcile), clock=fake_clock)
    async with running(controller):
        controller.enqueue(KEY)
        await fake_clock.advance(0)
    assert seen == [KEY]
    assert "reconcile" in repr(controller.reconciler)


async def test_conflict_is_a_quiet_retry(
    fake_clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def conflict(request: Request, n: int) -> Result:
        if n == 1:
            raise Conflict("the object has been modified", reason="Conflict")
        return Result()

    rec = Recorder(fake_clock, conflict)
    controller = Controller("q", rec, clock=fake_clock)
    with caplog.at_level(logging.INFO, logger="kcm.runtime"):
        async with running(controller):
            controller.enqueue(KEY)
            await fake_clock.advance(0.005)
    assert rec.times() == [0.0, 0.005]
    [record] = [r for r in caplog.records if "conflict" in r.getMessage()]
    assert record.levelno == logging.INFO
    assert record.exc_info is None
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    "error",
    [
        NotFound('replicasets.apps "web-1" not found', reason="NotFound"),
        Forbidden('pods "web" is forbidden: exceeded quota: compute', reason="Forbidden"),
        ExceptionGroup("creates", [Forbidden("quota a"), Forbidden("quota b")]),
    ],
    ids=["404", "403", "group"],
)
async def test_api_errors_are_one_error_line_without_traceback(
    fake_clock: FakeClock, caplog: pytest.LogCaptureFixture, error: Exception
) -> None:
    async def fail_once(request: Request, n: int) -> Result:
        if n == 1:
            raise error
        return Result()

    rec = Recorder(fake_clock, fail_once)
    controller = Controller("rs", rec, clock=fake_clock)
    with caplog.at_level(logging.INFO, logger="kcm.runtime"):
        async with running(controller):
            controller.enqueue(KEY)
            await fake_clock.advance(0.005)
    assert rec.times() == [0.0, 0.005]  # still retried with backoff
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert record.exc_info is None
    message = record.getMessage()
    assert "\n" not in message
    assert message.startswith("controller rs: reconcile of default/web failed: ")
    assert ("quota" in message) or ("not found" in message)


async def test_wait_idle_returns_once_every_reconcile_has_finished(fake_clock: FakeClock) -> None:
    release = anyio.Event()

    async def behaviour(request: Request, n: int) -> Result:
        if n == 1:
            await release.wait()
        if n == 2:
            raise RuntimeError("retry me")
        return Result()

    rec = Recorder(fake_clock, behaviour)
    controller = Controller("c", rec, clock=fake_clock, max_concurrent_reconciles=2)
    await controller.wait_idle()  # nothing to do
    idle = anyio.Event()

    async def wait() -> None:
        await controller.wait_idle()
        idle.set()

    with anyio.fail_after(5):
        async with running(controller), anyio.create_task_group() as tg:
            controller.enqueue(KEY)
            controller.enqueue(ObjectKey("default", "db"))
            tg.start_soon(wait)
            await fake_clock.advance(0)
            assert controller.active_workers == 1  # web still in flight; db failed
            assert not idle.is_set()
            release.set()
            await controller.wait_idle()
            await fake_clock.advance(0)
            assert idle.is_set()
            assert controller.reconcile_counts["success"] == 1
            assert controller.queue.waiting == 1  # db's backoff does not count as work
            await fake_clock.advance(0.005)  # due: reconciled again
            await controller.wait_idle()
            assert controller.reconcile_counts == {
                "success": 2,
                "error": 1,
                "requeue": 0,
                "requeue_after": 0,
            }

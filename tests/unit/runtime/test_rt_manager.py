"""Manager lifecycle on a fake clock with an in-memory lock: order, gating, failures, shutdown."""

from __future__ import annotations

import logging
import random
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from functools import partial

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import TaskStatus

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import ConfigError, GracefulShutdownTimeout, LeaderElectionLost
from kcm.leaderelection import InMemoryLock, InMemoryLockStore, LeaderElectionRecord
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import (
    Controller,
    LeaderElectionOptions,
    Manager,
    Request,
    Result,
    graceful_shield,
    run_until_signal,
)
from kcm.testing import FakeClock, client_config_for, eventually

pytestmark = pytest.mark.anyio


class Probe:
    """A runnable that logs start and stop (with the virtual time) into a shared list."""

    def __init__(self, name: str, log: list[str], *, fail_after: float | None = None) -> None:
        self.name = name
        self.log = log
        self.fail_after = fail_after
        self.running = False

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        self.log.append(f"start {self.name}")
        self.running = True
        task_status.started()
        try:
            if self.fail_after is not None:
                await anyio.lowlevel.checkpoint()
                raise ValueError(f"{self.name} broke")
            await anyio.sleep_forever()
        finally:
            self.running = False
            self.log.append(f"stop {self.name}")


class Blocked:
    """A reconciler whose reconciles never finish; records when they start and are cancelled."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.entered: list[float] = []
        self.cancelled: list[float] = []

    async def reconcile(self, request: Request) -> Result:
        self.entered.append(self.clock.monotonic())
        try:
            await self.clock.sleep(100_000)
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(self.clock.monotonic())
            raise
        return Result()

    def controller(self, *, grace: float) -> Controller[ObjectKey]:
        """Controller ``c`` on this reconciler, with ``grace`` for its in-flight reconciles."""
        return Controller("c", self, clock=self.clock, graceful_shutdown_timeout=grace)


KEY = ObjectKey("default", "web")


async def run_catching(
    manager: Manager,
    kind: type[Exception],
    caught: list[Exception],
    *,
    task_status: TaskStatus[None],
) -> None:
    """Run ``manager``; the ``kind`` error it ends with (if any) goes into ``caught``."""
    try:
        await manager.run(task_status=task_status)
    except kind as exc:
        caught.append(exc)


async def reconcile_in_flight(
    manager: Manager, controller: Controller[ObjectKey], clock: FakeClock
) -> float:
    """Once elected, enqueue :data:`KEY` and let its reconcile start; returns that time."""
    await manager.wait_elected()
    controller.enqueue(KEY)
    await clock.advance(0)
    return clock.monotonic()


def options(lock: InMemoryLock, **kw: object) -> LeaderElectionOptions:
    return LeaderElectionOptions(name="test", lock=lock, rng=random.Random(1), **kw)  # type: ignore[arg-type]


async def test_runnables_start_in_order_and_leader_gated_ones_only_once_elected(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    store = InMemoryLockStore()
    now = clock.now()
    store.record = LeaderElectionRecord(  # another replica holds a fresh lease
        holder_identity="other", lease_duration_seconds=15, acquire_time=now, renew_time=now
    )
    log: list[str] = []
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, leader_election=options(InMemoryLock(store, "me")))
        manager.add(Probe("leader-a", log))
        manager.add(Probe("plain-1", log), needs_leader_election=False)
        manager.add(Probe("leader-b", log))
        manager.add(Probe("plain-2", log), needs_leader_election=False)
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            assert log == ["start plain-1", "start plain-2"]
            assert not manager.is_leader
            await clock.advance(14)  # the other holder's lease has not expired by our clock
            assert log == ["start plain-1", "start plain-2"]
            await clock.advance(10)  # expired, and a jittered retry (<= 4.4 s) has come
            assert log == ["start plain-1", "start plain-2", "start leader-a", "start leader-b"]
            assert manager.is_leader
            assert store.record is not None
            assert store.record.holder_identity == "me"
            tg.cancel_scope.cancel()
    # Reverse order: leader-gated runnables first, then the others; the lease is released.
    assert log[4:6] == ["stop leader-a", "stop leader-b"] or log[4:6] == [
        "stop leader-b",
        "stop leader-a",
    ]
    assert set(log[6:]) == {"stop plain-1", "stop plain-2"}
    assert store.record is not None
    assert store.record.holder_identity == ""
    assert not manager.is_leader


async def test_without_leader_election_everything_starts_and_is_leader(
    api_server: ApiServer,
) -> None:
    log: list[str] = []
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=FakeClock())
        manager.add(Probe("a", log))
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            with anyio.fail_after(5):
                await manager.wait_elected()
            assert manager.is_leader
            manager.add(Probe("late", log))  # added while running: started at once
            await anyio.wait_all_tasks_blocked()
            assert log == ["start a", "start late"]
            tg.cancel_scope.cancel()
    assert sorted(log[2:]) == ["stop a", "stop late"]


async def test_a_failing_runnable_stops_the_manager_with_its_error(api_server: ApiServer) -> None:
    log: list[str] = []
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=FakeClock())
        manager.add(Probe("ok", log), needs_leader_election=False)
        manager.add(Probe("bad", log, fail_after=0))
        with anyio.fail_after(5), pytest.raises(ValueError, match="bad broke"):
            await manager.run()
    assert "stop ok" in log
    with pytest.raises(RuntimeError, match="runs once"):
        await manager.run()


async def test_losing_leadership_stops_the_manager_with_leader_election_lost(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    store = InMemoryLockStore()
    log: list[str] = []
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, leader_election=options(InMemoryLock(store, "me")))
        probe = Probe("ctrl", log)
        manager.add(probe)
        errors: list[Exception] = []

        async with anyio.create_task_group() as tg:
            await tg.start(partial(run_catching, manager, LeaderElectionLost, errors))
            await clock.advance(0)
            assert probe.running
            store.partition("me")  # renewals hang: the leader must give up
            await clock.advance(11.9)
            assert probe.running  # renew_deadline + retry_period = 12 s after the last renewal
            await clock.advance(0.2)
            assert not probe.running
            assert not manager.is_leader
            assert errors == []  # the release is still being attempted (partitioned)
            await clock.advance(10)  # the release attempt times out; the manager stops
        assert len(errors) == 1
        assert "leader election lost" in str(errors[0])
    assert log == ["start ctrl", "stop ctrl"]


async def test_rejoin_on_loss_restarts_restartable_leader_runnables(api_server: ApiServer) -> None:
    clock = FakeClock()
    store = InMemoryLockStore()
    log: list[str] = []
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(
            client,
            clock=clock,
            leader_election=options(InMemoryLock(store, "me"), exit_on_loss=False),
        )
        manager.add(Probe("ctrl", log))
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            await clock.advance(0)
            store.partition("me")
            await clock.advance(12.1)
            assert log == ["start ctrl", "stop ctrl"]
            await clock.advance(10)  # the release attempt times out
            assert not manager.is_leader
            store.heal()
            await clock.advance(30)
            assert log == ["start ctrl", "stop ctrl", "start ctrl"]
            assert manager.is_leader
            tg.cancel_scope.cancel()


@pytest.mark.parametrize(("cleanup", "stops_after", "timed_out"), [(5, 5, False), (20, 10, True)])
async def test_graceful_shutdown_is_bounded_by_the_timeout(
    api_server: ApiServer,
    caplog: pytest.LogCaptureFixture,
    cleanup: float,
    stops_after: float,
    timed_out: bool,
) -> None:
    clock = FakeClock()
    finished: list[float] = []
    cut: list[float] = []

    class Slow:
        async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                with graceful_shield() as shield:
                    await clock.sleep(cleanup)  # cleanup that takes a while
                    finished.append(clock.monotonic())
                if shield.cancelled_caught:
                    cut.append(clock.monotonic())

    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=10)
        manager.add(Slow())
        done: list[float] = []
        raised: list[GracefulShutdownTimeout] = []

        async def run_manager(*, task_status: TaskStatus[anyio.CancelScope]) -> None:
            with anyio.CancelScope() as scope:
                task_status.started(scope)
                try:
                    await manager.run()
                except GracefulShutdownTimeout as exc:
                    raised.append(exc)
                    assert cut == [clock.monotonic()]  # raised once everything has stopped
            done.append(clock.monotonic())

        with anyio.fail_after(5), caplog.at_level(logging.ERROR, "kcm.runtime"):
            async with anyio.create_task_group() as tg:
                scope = await tg.start(run_manager)
                await clock.advance(0)
                start = clock.monotonic()
                scope.cancel()
                await clock.advance(stops_after - 0.1)
                assert finished == cut == done == []
                await clock.advance(0.1)
        assert done == [start + stops_after]
        if timed_out:
            assert finished == []
            assert cut == [start + 10]  # the manager's deadline broke the shield
        else:
            assert finished == [start + 5]
        assert manager.shutdown_timed_out is timed_out
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert bool(errors) is timed_out
        assert len(raised) == int(timed_out)
        if timed_out:
            assert "failed waiting for all runnables to end within grace period of 10" in errors[0]
            error = raised[0]
            assert isinstance(error, TimeoutError)
            assert str(error) == errors[0]
            assert error.timeout == 10
            assert error.runnables == ("Slow",)
            assert error.stages == ("leader", "runnables")
            assert "graceful_shutdown_timeout" in str(error)  # says what to do


async def test_the_manager_deadline_cancels_in_flight_reconciles(
    api_server: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    reconciler = Blocked(clock)
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=10)
        # The controller's own grace is longer: the manager's deadline wins.
        controller = reconciler.controller(grace=60)
        manager.add(controller)
        done: list[float] = []

        async def run_manager(*, task_status: TaskStatus[anyio.CancelScope]) -> None:
            with anyio.CancelScope() as scope:
                task_status.started(scope)
                with pytest.raises(GracefulShutdownTimeout) as raised:
                    await manager.run()
            assert raised.value.runnables == ("Controller c",)
            done.append(clock.monotonic())

        with anyio.fail_after(5), caplog.at_level(logging.ERROR, "kcm.runtime"):
            async with anyio.create_task_group() as tg:
                scope = await tg.start(run_manager)
                start = await reconcile_in_flight(manager, controller, clock)
                assert reconciler.entered == [start]
                scope.cancel()
                await clock.advance(9.9)
                assert reconciler.cancelled == []  # still finishing gracefully
                assert done == []
                await clock.advance(0.1)
        assert reconciler.cancelled == [start + 10]
        assert done == [start + 10]
        assert manager.shutdown_timed_out
        assert any("within grace period of 10" in r.getMessage() for r in caplog.records)


async def test_run_until_signal_raises_the_shutdown_timeout(api_server: ApiServer) -> None:
    clock = FakeClock()
    reconciler = Blocked(clock)
    source = FakeSignals()
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=10)
        controller = reconciler.controller(grace=60)
        manager.add(controller)
        raised: list[Exception] = []

        async def main(*, task_status: TaskStatus[None]) -> None:
            try:
                await run_until_signal(manager, receiver=source, task_status=task_status)
            except Exception as exc:
                raised.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                await tg.start(main)
                start = await reconcile_in_flight(manager, controller, clock)
                await source.send_stream.send(signal.SIGTERM)
                await clock.advance(9.9)
                assert raised == []
                await clock.advance(0.1)
        source.send_stream.close()
        assert reconciler.cancelled == [start + 10]
        assert len(raised) == 1
        assert type(raised[0]) is GracefulShutdownTimeout  # plain, not in an exception group
        assert controller.active_workers == 0


async def test_a_zero_grace_cancels_at_once_without_an_error(api_server: ApiServer) -> None:
    clock = FakeClock()
    reconciler = Blocked(clock)
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=0)
        controller = reconciler.controller(grace=60)
        manager.add(controller)
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                await tg.start(manager.run)
                await reconcile_in_flight(manager, controller, clock)
                tg.cancel_scope.cancel()  # the manager must not raise out of here
        assert reconciler.cancelled == [clock.monotonic()]
        assert not manager.shutdown_timed_out


class FailOnDemand:
    """A runnable that raises ``ValueError("bad broke")`` once ``fail`` is set."""

    def __init__(self) -> None:
        self.fail = anyio.Event()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await self.fail.wait()
        raise ValueError("bad broke")


@pytest.mark.parametrize(
    "layout",
    ["beside-the-leader-gated", "both-leader-gated", "both-added-while-running"],
)
async def test_a_failing_runnable_stops_its_siblings_under_the_manager_deadline(
    api_server: ApiServer, layout: str
) -> None:
    """A runnable failing next to a controller does not cancel that controller outright (it
    would then drain on its own, longer grace first): the manager stops everything in order,
    its deadline cuts the in-flight reconcile short, and ``run()`` raises the failure with a
    note about the timeout."""
    clock = FakeClock()
    reconciler = Blocked(clock)
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=10)
        controller = reconciler.controller(grace=60)
        bad = FailOnDemand()
        if layout == "beside-the-leader-gated":
            manager.add(bad, needs_leader_election=False)
            manager.add(controller)
        elif layout == "both-leader-gated":
            manager.add(bad)
            manager.add(controller)
        raised: list[Exception] = []

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                await tg.start(partial(run_catching, manager, ValueError, raised))
                if layout == "both-added-while-running":  # started at once
                    manager.add(controller, needs_leader_election=False)
                    manager.add(bad, needs_leader_election=False)
                try:
                    start = await reconcile_in_flight(manager, controller, clock)
                    assert reconciler.entered == [start]
                    bad.fail.set()  # the manager stops with this error
                    await clock.advance(9.9)
                    assert reconciler.cancelled == []  # draining, under the manager's grace
                    assert raised == []
                    await clock.advance(0.1)
                    stopped_by_deadline = bool(raised)
                finally:
                    if not raised:
                        manager.force_stop()  # a failed check must not hang on the fake clock
        assert stopped_by_deadline, "the manager had not stopped at its 10 s deadline"
        assert reconciler.cancelled == [start + 10]  # not start + 60 + 10
        assert manager.shutdown_timed_out
        assert [str(e) for e in raised] == ["bad broke"]
        notes = getattr(raised[0], "__notes__", [])
        assert len(notes) == 1
        assert notes[0].startswith("then the shutdown timed out: manager: failed waiting")


async def test_losing_leadership_cancels_in_flight_reconciles_without_grace(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    store = InMemoryLockStore()
    reconciler = Blocked(clock)
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(
            client,
            clock=clock,
            graceful_shutdown_timeout=30,
            leader_election=options(InMemoryLock(store, "me")),
        )
        controller = reconciler.controller(grace=30)
        manager.add(controller)
        errors: list[Exception] = []

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                await tg.start(partial(run_catching, manager, LeaderElectionLost, errors))
                await clock.advance(0)
                assert manager.is_leader
                controller.enqueue(KEY)
                await clock.advance(0)
                start = clock.monotonic()
                assert reconciler.entered == [start]
                store.partition("me")  # renewals hang: leadership is lost 12 s later
                await clock.advance(11.9)
                assert reconciler.cancelled == []
                await clock.advance(0.2)
                # At the loss, not after the 30 s grace a shutdown would give.
                assert reconciler.cancelled == [start + 12]
                assert controller.active_workers == 0
                await clock.advance(10)  # the release attempt times out; the manager stops
        assert len(errors) == 1


async def test_a_second_signal_stops_at_once(api_server: ApiServer) -> None:
    clock = FakeClock()
    reconciler = Blocked(clock)
    source = FakeSignals()
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=30)
        controller = reconciler.controller(grace=30)
        manager.add(controller)
        result: list[signal.Signals | None] = []

        async def main(*, task_status: TaskStatus[None]) -> None:
            result.append(await run_until_signal(manager, receiver=source, task_status=task_status))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                await tg.start(main)
                await reconcile_in_flight(manager, controller, clock)
                await source.send_stream.send(signal.SIGTERM)  # graceful: the reconcile goes on
                await clock.advance(1)
                assert reconciler.cancelled == []
                assert result == []
                await source.send_stream.send(signal.SIGINT)  # stop now
                await clock.advance(0)
        source.send_stream.close()
        assert reconciler.cancelled == [clock.monotonic()]
        assert result == [signal.SIGTERM]
        assert not manager.shutdown_timed_out  # cut short on purpose, not timed out


async def test_controllers_run_again_after_leadership_is_regained(api_server: ApiServer) -> None:
    clock = FakeClock()
    store = InMemoryLockStore()
    seen: list[tuple[float, Request]] = []

    class Log:
        async def reconcile(self, request: Request) -> Result:
            seen.append((clock.monotonic(), request))
            return Result()

    async with ApiClient(client_config_for(api_server)) as client:
        await client.api(ConfigMap, "default").create(ConfigMap(metadata=ObjectMeta(name="web")))
        manager = Manager(
            client,
            clock=clock,
            leader_election=options(InMemoryLock(store, "me"), exit_on_loss=False),
        )
        controller = manager.controller_for(ConfigMap, namespace="default").build(Log())
        manager.add(controller)
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                await tg.start(manager.run)
                await manager.wait_elected()
                await clock.advance(0)
                assert [key for _, key in seen] == [KEY]  # the initial list
                store.partition("me")
                await clock.advance(12.1)
                await clock.advance(10)  # the release attempt times out
                assert not manager.is_leader
                store.heal()
                await clock.advance(30)  # campaigns again, wins, runs the controller again
                assert manager.is_leader
                assert controller.active_workers == 0
                # The controller ran again: its watch was registered anew and replayed the cache.
                assert [key for _, key in seen] == [KEY, KEY]
                tg.cancel_scope.cancel()


def test_leader_election_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="renew_deadline"):
        LeaderElectionOptions(name="x", lease_duration=5, renew_deadline=10)
    with pytest.raises(ConfigError, match="name"):
        LeaderElectionOptions(name="")
    with pytest.raises(ConfigError, match="unknown resource lock"):
        LeaderElectionOptions(name="x", resource_lock="endpoints")  # type: ignore[arg-type]


async def test_checks_must_have_unique_names(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client)
        manager.add_readyz_check("db", lambda: None)
        with pytest.raises(ValueError, match="already registered"):
            manager.add_readyz_check("db", lambda: None)
        with pytest.raises(ValueError, match="already registered"):
            manager.add_healthz_check("ping", lambda: None)
        with pytest.raises(ValueError, match="without '/'"):
            manager.add_healthz_check("a/b", lambda: None)


class FakeSignals:
    """An injectable signal source: ``send()`` delivers a signal to the receiver."""

    def __init__(self) -> None:
        self.send_stream, self.receive_stream = anyio.create_memory_object_stream[signal.Signals](1)
        self.opened = False

    @contextmanager
    def __call__(self) -> Iterator[AsyncIterator[signal.Signals]]:
        self.opened = True
        with self.receive_stream:
            yield self.receive_stream


async def test_run_until_signal_shuts_down_on_an_injected_signal(api_server: ApiServer) -> None:
    log: list[str] = []
    source = FakeSignals()
    store = InMemoryLockStore()
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(
            client, clock=FakeClock(), leader_election=options(InMemoryLock(store, "me"))
        )
        manager.add(Probe("ctrl", log))
        result: list[signal.Signals | None] = []

        async def main(*, task_status: TaskStatus[None]) -> None:
            result.append(await run_until_signal(manager, receiver=source, task_status=task_status))

        async with anyio.create_task_group() as tg:
            await tg.start(main)
            await manager.wait_elected()
            assert source.opened
            assert log == ["start ctrl"]
            await source.send_stream.send(signal.SIGTERM)
        source.send_stream.close()
        assert result == [signal.SIGTERM]
        assert log == ["start ctrl", "stop ctrl"]
        assert store.record is not None
        assert store.record.holder_identity == ""  # released


async def test_run_until_signal_handles_a_real_sigterm(api_server: ApiServer) -> None:
    # SIGTERM is sent only once anyio's receiver is installed (task_status.started()), and the
    # receiver restores the previous handler on exit, so this is safe on both backends.
    log: list[str] = []
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=FakeClock())
        manager.add(Probe("ctrl", log))
        result: list[signal.Signals | None] = []

        async def main(*, task_status: TaskStatus[None]) -> None:
            result.append(await run_until_signal(manager, task_status=task_status))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                await tg.start(main)
                signal.raise_signal(signal.SIGTERM)
        assert result == [signal.SIGTERM]
        assert log == ["start ctrl", "stop ctrl"]


async def test_wiring_after_the_manager_stopped_is_refused(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=FakeClock())
        recorder = manager.event_recorder("demo")
        assert manager.event_recorder("demo") is recorder  # one recorder per component
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            assert manager.event_recorder("other") is not None  # the broadcaster exists
            tg.cancel_scope.cancel()
        with pytest.raises(RuntimeError, match="shutting down or has stopped"):
            manager.add(Probe("late", []))

    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=FakeClock())
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            with pytest.raises(RuntimeError, match=r"before Manager\.run"):
                manager.event_recorder("too-late")
            tg.cancel_scope.cancel()


async def test_events_are_written_with_the_event_client(api_server: ApiServer) -> None:
    """``event_client``: the broadcaster writes through it, so a drained informer client never
    holds events back (the field manager of the written Event names the writing client)."""
    import msgspec

    from kcm.models.core_v1 import Event

    config = client_config_for(api_server)
    async with (
        ApiClient(config) as client,
        ApiClient(msgspec.structs.replace(config, user_agent="event-writer/1.0")) as events,
    ):
        manager = Manager(client, clock=FakeClock(), event_client=events)
        recorder = manager.event_recorder("demo")
        cm = await client.api(ConfigMap, "default").create(
            ConfigMap(metadata=ObjectMeta(name="subject"))
        )
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            recorder.event(cm, "Normal", "Seen", "written by the event client")

            async def listed() -> bool:
                return bool((await client.api(Event, "default").list()).items)

            await eventually(listed)
            written = (await client.api(Event, "default").list()).items
            tg.cancel_scope.cancel()
        assert [e.reason for e in written] == ["Seen"]
        assert [f.manager for f in written[0].metadata.managed_fields or []] == ["event-writer"]

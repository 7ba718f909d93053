"""LeaderElector against the in-memory lock on a fake clock: every timing is exact."""

from __future__ import annotations

import random
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import anyio
import pytest
from prometheus_client import CollectorRegistry

from kcm.errors import ConfigError, Conflict, InternalError, LeaderElectionLost
from kcm.leaderelection import (
    HealthzAdaptor,
    InMemoryLock,
    InMemoryLockStore,
    LeaderElectionConfig,
    LeaderElectionMetrics,
    LeaderElectionRecord,
    LeaderElector,
    ResourceLock,
    default_identity,
)
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio

CFG = LeaderElectionConfig()  # 15 s / 10 s / 2 s
T0 = 1000.0


class Candidate:
    """One replica: an elector whose leader work records the interval it ran in."""

    def __init__(
        self,
        clock: FakeClock,
        store: InMemoryLockStore,
        identity: str,
        config: LeaderElectionConfig = CFG,
        *,
        metrics: LeaderElectionMetrics | None = None,
        cleanup: float = 0.0,
    ) -> None:
        self.clock = clock
        self.identity = identity
        self.lock = InMemoryLock(store, identity)
        self.intervals: list[tuple[float, float]] = []
        self.stopped: list[float] = []
        self.new_leaders: list[str] = []
        self.cleanup = cleanup
        self._start: float | None = None
        self.elector = LeaderElector(
            self.lock,
            config,
            on_started_leading=self.work,
            on_stopped_leading=lambda: self.stopped.append(clock.monotonic()),
            on_new_leader=self.new_leaders.append,
            clock=clock,
            metrics=metrics,
            rng=random.Random(identity),
        )

    async def work(self) -> None:
        self._start = self.clock.monotonic()
        try:
            await anyio.sleep_forever()
        finally:
            if self.cleanup:
                with anyio.CancelScope(shield=True):
                    await self.clock.sleep(self.cleanup)
            self.intervals.append((self._start, self.clock.monotonic()))
            self._start = None

    @property
    def leading(self) -> bool:
        return self._start is not None


@asynccontextmanager
async def running(*candidates: Candidate) -> AsyncIterator[anyio.abc.TaskGroup]:
    async with anyio.create_task_group() as tg:
        for c in candidates:
            tg.start_soon(c.elector.run)
        await anyio.wait_all_tasks_blocked()
        yield tg
        tg.cancel_scope.cancel()


@pytest.fixture
def store() -> InMemoryLockStore:
    return InMemoryLockStore()


# --------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"lease_duration": 0}, "lease_duration"),
        ({"renew_deadline": -1}, "renew_deadline"),
        ({"retry_period": float("nan")}, "retry_period"),
        ({"lease_duration": 10, "renew_deadline": 10}, "lease_duration"),
        ({"renew_deadline": 2.4, "retry_period": 2}, "renew_deadline"),
        ({"jitter_factor": -0.1}, "jitter_factor"),
    ],
)
def test_config_is_validated(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        LeaderElectionConfig(**kwargs)
    assert info.value.field == field


def test_config_defaults_match_client_go() -> None:
    cfg = LeaderElectionConfig()
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (15, 10, 2)
    assert cfg.jitter_factor == 1.2
    assert cfg.lease_duration_seconds == 15
    assert cfg.acting_horizon == 12
    assert (
        LeaderElectionConfig(
            lease_duration=2.5, renew_deadline=2, retry_period=0.5
        ).lease_duration_seconds
        == 3
    )
    # renew_deadline just above 1.2 * retry_period is accepted
    LeaderElectionConfig(renew_deadline=2.41, retry_period=2)


async def test_empty_identity_is_rejected(store: InMemoryLockStore) -> None:
    async def work() -> None:
        pass

    lock = InMemoryLock(store, "x")
    lock._identity = ""
    with pytest.raises(ConfigError):
        LeaderElector(lock, on_started_leading=work)


def test_default_identity_is_hostname_plus_unique_suffix(store: InMemoryLockStore) -> None:
    a, b = default_identity(), default_identity()
    assert a.startswith(socket.gethostname() + "_")
    assert a != b
    assert InMemoryLock(store).identity.startswith(socket.gethostname() + "_")
    assert isinstance(InMemoryLock(store), ResourceLock)


# --------------------------------------------------------------------------- acquire / renew


async def test_acquire_creates_the_record(fake_clock: FakeClock, store: InMemoryLockStore) -> None:
    registry = CollectorRegistry()
    a = Candidate(fake_clock, store, "a", metrics=LeaderElectionMetrics(registry))
    async with anyio.create_task_group() as tg:
        await tg.start(a.elector.run)
        await anyio.wait_all_tasks_blocked()
        assert a.elector.is_leader
        assert a.leading
        assert a.elector.leader == "a"
        assert store.record is not None
        assert store.record.holder_identity == "a"
        assert store.record.lease_duration_seconds == 15
        assert store.record.leader_transitions == 0
        assert store.record.acquire_time == fake_clock.now()
        assert a.lock.calls == ["get", "create"]
        assert a.lock.events == ["a became leader"]
        assert a.new_leaders == ["a"]
        labels = {"name": "memory/lock"}
        assert registry.get_sample_value("leader_election_master_status", labels) == 1
        assert registry.get_sample_value("leader_election_transitions_total", labels) == 1
        assert a.elector.lease_valid_for() == pytest.approx(12)
        tg.cancel_scope.cancel()
    assert registry.get_sample_value("leader_election_master_status", labels) == 0
    assert a.intervals == [(T0, T0)]
    assert a.stopped == [T0]
    assert not a.elector.is_leader


async def test_renews_every_retry_period_on_the_fast_path(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        acquired = store.record
        assert acquired is not None
        await fake_clock.advance(1.9)
        assert store.record is acquired
        await fake_clock.advance(0.1)
        assert store.record is not acquired
        assert store.record.renew_time == fake_clock.now()
        assert store.record.acquire_time == acquired.acquire_time
        await fake_clock.advance(20)
        # One update per 2 s, never a GET (L10: the fast path).
        assert a.lock.calls == ["get", "create"] + ["update"] * 11
        assert a.elector.lease_valid_for() == pytest.approx(12)
        a.elector.check()
        assert len(store.writes) == 12


async def test_candidate_waits_while_the_lease_is_held(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a, b = Candidate(fake_clock, store, "a"), Candidate(fake_clock, store, "b")
    async with running(a), running(b):
        await fake_clock.advance(40)
        assert a.leading
        assert not b.leading
        assert b.elector.leader == "a"
        assert b.new_leaders == ["a"]
        assert not b.elector.is_leader
        assert b.elector.lease_valid_for() == 0
        b.elector.check()  # non-leaders are always healthy
    assert b.stopped == []  # never led, so never "stopped" (B20)


async def test_stopped_leading_not_called_if_never_leader(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    store.partition("a")
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        await fake_clock.advance(30)
    assert a.stopped == []
    assert a.intervals == []
    assert a.lock.events == []


async def test_acquire_retries_are_jittered(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    store.fail_next(5, identity="a")
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        await fake_clock.run_until_idle(limit=30)
        assert a.leading
    # five failed GETs, each followed by a wait in [2, 4.4); all different
    first = a.intervals[0][0] - T0
    assert 5 * 2 <= first < 5 * 4.4
    assert first not in (10.0, 22.0)


# --------------------------------------------------------------------------- losing


async def test_leader_work_is_cancelled_before_the_lease_can_expire(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a = Candidate(fake_clock, store, "a")
    async with anyio.create_task_group() as tg:
        await tg.start(a.elector.run)
        await fake_clock.advance(1)
        store.partition("a")  # every request from now on hangs
        await fake_clock.advance(10.9)  # t = 11.9 s after the last renewal began
        assert a.leading
        assert a.elector.is_leader
        assert a.elector.lease_valid_for() == pytest.approx(0.1)
        await fake_clock.advance(0.1)  # renew_deadline + retry_period after it: give up
        assert not a.leading
        assert not a.elector.is_leader
        assert a.intervals == [(T0, T0 + 12)]
        assert a.stopped == [T0 + 12]
        assert a.lock.events == ["a became leader", "a stopped leading"]
    # run() returned by itself: nothing was left to cancel
    assert not tg.cancel_scope.cancel_called


async def test_renew_survives_a_burst_of_errors_shorter_than_the_deadline(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    registry = CollectorRegistry()
    a = Candidate(fake_clock, store, "a", metrics=LeaderElectionMetrics(registry))
    async with running(a):
        store.fail_next(8, identity="a", error=lambda: InternalError("boom"))
        await fake_clock.advance(30)
        assert a.leading
        assert a.intervals == []
        slow = registry.get_sample_value("leader_election_slowpath_total", {"name": "memory/lock"})
        assert slow == 4  # four rounds fell back from the fast path; each GET also failed


async def test_leader_that_sees_another_holder_stops_at_once(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        await fake_clock.advance(1)
        # Someone overwrote the record (e.g. an admin); the next fast-path update conflicts.
        store.record = LeaderElectionRecord(holder_identity="intruder", lease_duration_seconds=15)
        store.version += 1
        await fake_clock.advance(1)
        assert not a.leading
        assert a.intervals == [(T0, T0 + 2)]
        assert a.elector.leader == "intruder"
        assert a.new_leaders == ["a", "intruder"]


# --------------------------------------------------------------------------- taking over


async def test_steal_only_after_expiry_measured_from_local_observation(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a, b = Candidate(fake_clock, store, "a"), Candidate(fake_clock, store, "b")
    # b's wall clock is an hour ahead: timestamps in the record must not matter (L10).
    async with running(a), running(b):
        await fake_clock.advance(5)
        store.partition("a")
        last_write = next(t for t in reversed(store.writes) if t[0] == "a")[1]
        assert last_write.renew_time == fake_clock.now() - timedelta(seconds=1)
        await fake_clock.advance(60)
        assert not a.leading
        assert b.leading
        (_a_start, a_end), (b_start, _) = a.intervals[0], (b._start, None)
        assert b_start is not None
        assert a_end <= T0 + 4 + 12  # a gave up 12 s after its last renewal began
        # b saw a's last renewal at some poll after T0 + 4 and then waited 15 s
        assert T0 + 4 + 15 <= b_start <= T0 + 4 + 15 + 2 * 4.4
        assert a_end < b_start
        assert store.record is not None
        assert store.record.holder_identity == "b"
        assert store.record.leader_transitions == 1


async def test_fresh_candidate_waits_a_full_lease_even_for_an_abandoned_record(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    long_ago = fake_clock.now() - timedelta(days=1)
    store.record = LeaderElectionRecord(
        holder_identity="dead",
        lease_duration_seconds=15,
        acquire_time=long_ago,
        renew_time=long_ago,
        leader_transitions=7,
    )
    b = Candidate(fake_clock, store, "b")
    async with running(b):
        await fake_clock.advance(14.9)
        assert not b.leading  # no trust in another machine's timestamps (B18)
        await fake_clock.advance(4.5)
        assert b.leading
        assert store.record.leader_transitions == 8
        assert b.new_leaders == ["dead", "b"]


async def test_holders_lease_duration_is_honoured(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    store.record = LeaderElectionRecord(holder_identity="slow", lease_duration_seconds=60)
    b = Candidate(fake_clock, store, "b")  # configured for 15 s
    async with running(b):
        await fake_clock.advance(59)
        assert not b.leading  # the holder's 60 s apply, not our 15 s (B19)
        await fake_clock.advance(5.5)
        assert b.leading


async def test_conflicting_candidates_exactly_one_wins(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    store.record = LeaderElectionRecord(holder_identity="", lease_duration_seconds=1)
    cands = [Candidate(fake_clock, store, f"c{i}") for i in range(5)]
    # Same seed for everyone: they all retry in lock-step and collide on every attempt.
    for c in cands:
        c.elector._rng = random.Random(1)
    async with running(*cands):
        await fake_clock.advance(60)
        leaders = [c for c in cands if c.leading]
        assert len(leaders) == 1
        assert all(c.elector.leader == leaders[0].identity for c in cands)
        assert store.record is not None
        assert store.record.leader_transitions == 1


async def test_conflict_on_fast_path_falls_back_to_get(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        store.fail_next(1, identity="a", error=lambda: Conflict("stale"))
        await fake_clock.advance(2)
        assert a.leading
        assert a.lock.calls[-3:] == ["update", "get", "update"]


async def test_lost_reply_is_recovered_on_the_slow_path(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        store.lose_responses("a")
        await fake_clock.advance(2)  # the write lands, but a hears an error
        store.heal("a")
        await fake_clock.advance(2)  # its cached version is stale now: conflict, GET, update
        assert a.leading
        # t=2: fast update lands unheard, GET, update lands unheard; t=4: stale version
        # conflicts, GET, update.
        assert a.lock.calls[-6:] == ["update", "get", "update"] * 2
        assert store.record is not None
        assert store.record.holder_identity == "a"
        assert store.record.leader_transitions == 0


# --------------------------------------------------------------------------- release


async def test_release_on_cancel_hands_over_at_once(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    cfg = LeaderElectionConfig(release_on_cancel=True)
    a = Candidate(fake_clock, store, "a", cfg, cleanup=3)
    b = Candidate(fake_clock, store, "b", cfg)
    a_scope = anyio.CancelScope()

    async def run_a(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        with a_scope:
            await a.elector.run(task_status=task_status)

    async with anyio.create_task_group() as tg:
        await tg.start(run_a)
        tg.start_soon(b.elector.run)
        await fake_clock.advance(30)
        assert a.leading
        assert not b.leading
        a_scope.cancel()
        await anyio.wait_all_tasks_blocked()
        # a's shielded cleanup runs for 3 s; the lease must stay a's meanwhile (B21)
        assert store.record is not None
        assert store.record.holder_identity == "a"
        await fake_clock.advance(2.9)
        assert store.record.holder_identity == "a"
        await fake_clock.advance(0.1)
        released_at = T0 + 33
        assert a.intervals == [(T0, released_at)]
        assert a.stopped == [released_at]
        assert store.record.holder_identity == ""
        assert store.record.lease_duration_seconds == 1
        assert store.record.leader_transitions == 0
        assert a.elector.leader == ""
        await fake_clock.advance(4.4)
        assert b.leading
        assert b._start is not None
        assert b._start - released_at <= 4.4  # one jittered retry, not a full lease
        assert store.record.holder_identity == "b"
        assert store.record.leader_transitions == 1
        tg.cancel_scope.cancel()


async def test_no_release_without_release_on_cancel(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        pass
    assert store.record is not None
    assert store.record.holder_identity == "a"


async def test_leader_work_error_propagates_after_cleanup(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    stopped: list[bool] = []

    async def work() -> None:
        await fake_clock.sleep(5)
        raise ValueError("leader work failed")

    elector = LeaderElector(
        InMemoryLock(store, "a"),
        LeaderElectionConfig(release_on_cancel=True),
        on_started_leading=work,
        on_stopped_leading=lambda: stopped.append(True),
        clock=fake_clock,
    )

    async def lead_for_five_seconds() -> None:
        async with anyio.create_task_group() as tg:
            await tg.start(elector.run)
            await fake_clock.advance(5)

    with pytest.raises(ExceptionGroup) as info:
        await lead_for_five_seconds()
    assert info.group_contains(ValueError)
    assert stopped == [True]
    assert store.record is not None
    assert store.record.holder_identity == ""


async def test_run_twice_is_an_error(fake_clock: FakeClock, store: InMemoryLockStore) -> None:
    a = Candidate(fake_clock, store, "a")
    async with running(a):
        with pytest.raises(RuntimeError):
            await a.elector.run()


async def test_rejoins_after_losing(fake_clock: FakeClock, store: InMemoryLockStore) -> None:
    a = Candidate(fake_clock, store, "a")
    async with anyio.create_task_group() as tg:
        await tg.start(a.elector.run)
        store.partition("a")
        await fake_clock.advance(13)
        assert not a.leading
        store.heal()
        tg.start_soon(a.elector.run)
        await fake_clock.advance(5)
        assert a.leading  # nobody else took it: the record still names a
        tg.cancel_scope.cancel()
    assert len(a.intervals) == 2


# --------------------------------------------------------------------------- health


class StuckLock:
    """Wraps a lock; once stuck, update() ignores cancellation (a deadlocked renew loop)."""

    def __init__(self, inner: InMemoryLock, clock: FakeClock) -> None:
        self.inner, self.clock, self.stuck = inner, clock, False
        self.unstick = anyio.Event()
        self.identity = inner.identity
        self.get, self.create = inner.get, inner.create
        self.record_event, self.describe = inner.record_event, inner.describe

    async def update(self, record: LeaderElectionRecord) -> None:
        if self.stuck:
            with anyio.CancelScope(shield=True):
                await self.unstick.wait()
        await self.inner.update(record)


async def test_health_check_fails_when_the_leader_stops_renewing(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    lock = StuckLock(InMemoryLock(store, "a"), fake_clock)
    health = HealthzAdaptor(tolerance=20)
    health.check()  # healthy before an elector is attached

    async def work() -> None:
        await anyio.sleep_forever()

    elector = LeaderElector(lock, on_started_leading=work, clock=fake_clock)
    health.set_elector(elector)
    async with anyio.create_task_group() as tg:
        await tg.start(elector.run)
        await fake_clock.advance(10)
        health.check()
        lock.stuck = True  # the renewal at +12 s never returns
        await fake_clock.advance(35)  # 35 s after the last renewal began (at +10 s)
        assert elector.is_leader
        health.check()
        await fake_clock.advance(0.1)
        with pytest.raises(LeaderElectionLost, match="renew loop is stuck"):
            health.check()
        lock.unstick.set()
        tg.cancel_scope.cancel()


async def test_leader_work_returning_keeps_leadership(
    fake_clock: FakeClock, store: InMemoryLockStore
) -> None:
    done: list[float] = []

    async def work() -> None:
        done.append(fake_clock.monotonic())

    seen: list[str] = []
    elector = LeaderElector(
        InMemoryLock(store, "a"),
        LeaderElectionConfig(release_on_cancel=True),
        on_started_leading=work,
        on_new_leader=seen.append,
        clock=fake_clock,
    )
    async with anyio.create_task_group() as tg:
        await tg.start(elector.run)
        await fake_clock.advance(30)
        assert done == [T0]
        assert elector.is_leader  # still renewing, as in client-go
        assert store.record is not None
        assert store.record.renew_time == fake_clock.now()
        tg.cancel_scope.cancel()
    assert seen == ["a", ""]  # the release is reported as "no leader"

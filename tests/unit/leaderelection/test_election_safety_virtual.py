"""Randomised safety check in virtual time: many fault schedules, exact and reproducible.

Five electors share an in-memory lock; each sees the shared fake clock through its own rate
(skewed by up to 5 %). A seeded schedule partitions electors (their calls hang), loses their
replies, injects error bursts and kills/restarts them. Leader intervals are recorded on the
shared clock and must never overlap.
"""

from __future__ import annotations

import itertools
import random
from datetime import datetime

import anyio
import pytest

from kcm.errors import InternalError
from kcm.leaderelection import InMemoryLock, InMemoryLockStore, LeaderElectionConfig, LeaderElector
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio


class RateClock:
    """A view of a shared FakeClock whose monotonic time runs ``rate`` times as fast."""

    def __init__(self, base: FakeClock, rate: float) -> None:
        self.base, self.rate = base, rate
        self.origin = base.monotonic()

    def monotonic(self) -> float:
        return self.origin + (self.base.monotonic() - self.origin) * self.rate

    def now(self) -> datetime:
        return self.base.now()

    async def sleep(self, seconds: float) -> None:
        await self.base.sleep(max(0.0, seconds) / self.rate)

    async def sleep_until(self, deadline: float) -> None:
        await self.sleep(deadline - self.monotonic())


@pytest.mark.parametrize("seed", range(1, 21))
async def test_no_overlap_under_random_faults(seed: int, anyio_backend: str) -> None:
    steps = 40
    rng = random.Random(seed)
    clock = FakeClock()
    store = InMemoryLockStore()
    cfg = LeaderElectionConfig(release_on_cancel=seed % 2 == 0)
    intervals: list[tuple[float, float, str]] = []
    scopes: dict[int, anyio.CancelScope] = {}
    identities: dict[int, str] = {}
    generation = itertools.count()
    leading: set[int] = set()
    leader_kills = 0

    async def replica(index: int) -> None:
        identity = f"r{index}-{next(generation)}"
        identities[index] = identity

        async def work() -> None:
            start = clock.monotonic()
            leading.add(index)
            try:
                await anyio.sleep_forever()
            finally:
                leading.discard(index)
                intervals.append((start, clock.monotonic(), identity))

        elector = LeaderElector(
            InMemoryLock(store, identity),
            cfg,
            on_started_leading=work,
            clock=RateClock(clock, 1 + rng.uniform(-0.05, 0.05)),
            rng=rng,
        )
        with anyio.CancelScope() as scope:
            scopes[index] = scope
            while True:
                await elector.run()

    async with anyio.create_task_group() as tg:
        for i in range(5):
            tg.start_soon(replica, i)
        for _ in range(steps):
            await clock.advance(rng.uniform(0.5, 6))
            action = rng.choice(["partition", "lose", "burst", "kill", "kill_leader", "heal"])
            if action == "kill_leader" and leading:
                victim = next(iter(leading))
                leader_kills += 1
                action = "kill"
            else:
                victim = rng.randrange(5)
            who = identities[victim]
            if action == "partition":
                store.partition(who)
            elif action == "lose":
                store.lose_responses(who)
            elif action == "burst":
                store.fail_next(rng.randint(1, 6), error=lambda: InternalError("injected"))
            elif action in ("kill", "kill_leader"):
                scopes[victim].cancel()
                store.heal(who)
                tg.start_soon(replica, victim)
            else:
                store.heal()
        store.heal()
        await clock.advance(40)
        tg.cancel_scope.cancel()
    spans = sorted(intervals)
    assert len(spans) >= 1 + min(leader_kills, 1), spans
    for (_, e1, n1), (s2, _, n2) in itertools.pairwise(spans):
        assert e1 <= s2, f"{n1} led until {e1}, {n2} from {s2}"

"""Hypothesis: random enqueues, outcomes and worker counts keep the controller's guarantees.

* never two reconciles of one key at once;
* no lost events: every enqueue of a key at time t is followed by a reconcile of that key that
  starts at or after t, whatever the outcomes (errors, terminal errors, requeues, slow runs).
"""

from __future__ import annotations

import itertools

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcm.models import ObjectKey
from kcm.runtime import Controller, Request, Result, TerminalError
from kcm.testing import FakeClock

KEYS = st.sampled_from([ObjectKey("ns", n) for n in "ab"])
STEPS = st.sampled_from([0.0, 0.001, 0.01, 0.3, 1.0])
# "slow" (a reconcile that spans later enqueues) is where lost events would hide: favour it.
OUTCOMES = st.sampled_from(["slow", "slow", "ok", "error", "terminal", "requeue", "after"])
OPS = st.one_of(st.tuples(st.just("add"), KEYS), st.tuples(st.just("advance"), STEPS))


async def _check(program: list[tuple[str, object]], outcomes: list[str], workers: int) -> None:
    clock = FakeClock()
    busy: set[Request] = set()
    overlaps: list[Request] = []
    starts: list[tuple[float, Request]] = []
    counter = itertools.count()

    class Scripted:
        async def reconcile(self, request: Request) -> Result:
            outcome = outcomes[next(counter) % len(outcomes)]
            if request in busy:
                overlaps.append(request)
            busy.add(request)
            starts.append((clock.monotonic(), request))
            try:
                if outcome == "slow":
                    await clock.sleep(0.7)
            finally:
                busy.discard(request)
            if outcome == "error":
                raise RuntimeError("scripted")
            if outcome == "terminal":
                raise TerminalError("scripted")
            if outcome == "requeue":
                return Result(requeue=True)
            if outcome == "after":
                return Result(requeue_after=2.0)
            return Result()

    controller = Controller(
        "prop", Scripted(), clock=clock, max_concurrent_reconciles=workers,
        graceful_shutdown_timeout=0,
    )  # fmt: skip
    adds: list[tuple[float, Request]] = []
    async with anyio.create_task_group() as tg:
        await tg.start(controller.run)
        for op, arg in program:
            if op == "add":
                assert isinstance(arg, ObjectKey)
                controller.enqueue(arg)
                adds.append((clock.monotonic(), arg))
            else:
                assert isinstance(arg, float)
                await clock.advance(arg)
        for _ in range(10):
            await clock.advance(1.0)
        tg.cancel_scope.cancel()
    assert overlaps == []
    for at, key in adds:
        assert any(t >= at and k == key for t, k in starts), f"{key} added at {at} never ran"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    program=st.lists(OPS, max_size=25),
    outcomes=st.lists(OUTCOMES, min_size=1, max_size=4),
    workers=st.integers(1, 3),
)
def test_controller_guarantees(
    backend: str, program: list[tuple[str, object]], outcomes: list[str], workers: int
) -> None:
    anyio.run(_check, program, outcomes, workers, backend=backend)

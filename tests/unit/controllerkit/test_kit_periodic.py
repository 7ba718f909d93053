"""run_every: when passes run (at once or after a period, sliding or not) and what a failed
pass does, on a fake clock."""

from __future__ import annotations

import anyio
import pytest

from kcm.controllerkit import run_every
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio

START = 1000.0


class Passes:
    """Records when each pass started; each takes ``takes`` seconds of the clock."""

    def __init__(self, clock: FakeClock, takes: float = 0.0) -> None:
        self.clock = clock
        self.takes = takes
        self.started: list[float] = []

    async def __call__(self) -> None:
        self.started.append(self.clock.monotonic() - START)
        if self.takes:
            await self.clock.sleep(self.takes)


async def run_for(clock: FakeClock, seconds: float, **kwargs: object) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_every(clock, 10, **kwargs))  # type: ignore[arg-type]
        await clock.advance(seconds)
        tg.cancel_scope.cancel()


async def test_sliding_passes_run_a_period_after_the_last_one_ended() -> None:
    clock = FakeClock(START)
    passes = Passes(clock, takes=3)
    await run_for(clock, 30, run_pass=passes)
    assert passes.started == [0, 13, 26]


async def test_without_at_once_the_first_pass_waits_a_period() -> None:
    clock = FakeClock(START)
    passes = Passes(clock)
    await run_for(clock, 30, run_pass=passes, at_once=False)
    assert passes.started == [10, 20, 30]


async def test_non_sliding_passes_keep_the_beat_and_skip_the_missed_ones() -> None:
    clock = FakeClock(START)
    passes = Passes(clock, takes=3)
    await run_for(clock, 30, run_pass=passes, sliding=False)
    assert passes.started == [0, 10, 20, 30]
    clock = FakeClock(START)
    slow = Passes(clock, takes=15)  # overruns a beat: the next starts at once
    await run_for(clock, 45, run_pass=slow, sliding=False)
    assert slow.started == [0, 15, 30, 45]


async def test_a_failed_pass_goes_to_on_failure_and_the_loop_goes_on() -> None:
    clock = FakeClock(START)
    failures: list[Exception] = []
    calls: list[float] = []

    async def failing() -> None:
        calls.append(clock.monotonic() - START)
        raise RuntimeError(f"pass {len(calls)}")

    await run_for(clock, 20, run_pass=failing, on_failure=failures.append)
    assert calls == [0, 10, 20]
    assert [str(e) for e in failures] == ["pass 1", "pass 2", "pass 3"]


async def test_without_on_failure_a_failed_pass_ends_the_loop() -> None:
    clock = FakeClock(START)

    async def failing() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await run_every(clock, 10, failing)

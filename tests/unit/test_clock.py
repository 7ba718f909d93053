"""kcm.clock and kcm.testing.FakeClock: virtual time that tests drive."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest

from kcm.clock import SYSTEM_CLOCK, Clock, move_on_after
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio


def test_both_clocks_satisfy_the_protocol() -> None:
    assert isinstance(SYSTEM_CLOCK, Clock)
    assert isinstance(FakeClock(), Clock)


async def test_advance_wakes_sleepers_in_deadline_order() -> None:
    clock = FakeClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.monotonic()))

    async with anyio.create_task_group() as tg:
        tg.start_soon(sleeper, "late", 5.0)
        tg.start_soon(sleeper, "early", 2.0)
        await clock.advance(1.9)
        assert woke == []
        await clock.advance(0.1)
        assert woke == [("early", 1002.0)]
        await clock.advance(10)
        assert woke == [("early", 1002.0), ("late", 1005.0)]
    assert clock.monotonic() == 1012.0


async def test_chained_sleeps_within_one_advance_all_run() -> None:
    clock = FakeClock()
    ticks: list[float] = []

    async def ticker() -> None:
        for _ in range(3):
            await clock.sleep(1)
            ticks.append(clock.monotonic())

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        await clock.advance(10)
    assert ticks == [1001.0, 1002.0, 1003.0]


async def test_move_on_after_fires_on_virtual_time_only() -> None:
    clock = FakeClock()
    outcome: list[bool] = []

    async def guarded() -> None:
        async with move_on_after(clock, 5) as scope:
            await anyio.sleep_forever()
        outcome.append(scope.cancelled_caught)

    async with anyio.create_task_group() as tg:
        tg.start_soon(guarded)
        await clock.advance(4.99)
        assert outcome == []
        await clock.advance(0.01)
        assert outcome == [True]


async def test_move_on_after_on_the_system_clock_is_anyios_deadline() -> None:
    async with move_on_after(SYSTEM_CLOCK, 0) as scope:
        await anyio.sleep_forever()
    assert scope.cancelled_caught


async def test_wall_time_follows_monotonic_time_and_skew() -> None:
    clock = FakeClock()
    start = clock.now()
    await clock.advance(30)
    assert clock.now() - start == timedelta(seconds=30)
    clock.set_wall_offset(-3600)
    assert clock.now() - start == timedelta(seconds=30 - 3600)
    assert clock.monotonic() == 1030.0


async def test_run_until_idle_reports_virtual_time_spent() -> None:
    clock = FakeClock()
    async with anyio.create_task_group() as tg:
        tg.start_soon(clock.sleep, 7)
        tg.start_soon(clock.sleep, 3)
        assert await clock.run_until_idle() == 7
    with pytest.raises(ValueError, match="backwards"):
        await clock.advance(-1)

"""The timer loop of a controller that works in passes rather than per object (Go's
``wait.Until`` and ``wait.NonSlidingUntil``): one place that decides when the next pass is
due and what a failed pass does to the loop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NoReturn

from kcm.clock import Clock

__all__ = ["run_every"]


async def run_every(
    clock: Clock,
    period: float,
    run_pass: Callable[[], Awaitable[object]],
    *,
    at_once: bool = True,
    sliding: bool = True,
    on_failure: Callable[[Exception], object] | None = None,
) -> NoReturn:
    """Await ``run_pass()`` every ``period`` seconds of ``clock`` until cancelled.

    Args:
        clock: the clock the period runs on.
        period: seconds between passes.
        run_pass: one pass.
        at_once: run the first pass before waiting a period (Go's loops do).
        sliding: the period runs from the end of a pass (``wait.Until``); otherwise from its
            start (``wait.NonSlidingUntil``: a pass that overran is followed at once, the
            missed beats are skipped).
        on_failure: is given the exception of a failed pass, and the loop goes on; without it
            a failed pass ends the loop (its exception propagates).
    """
    deadline = clock.monotonic()

    async def wait() -> None:
        nonlocal deadline
        if sliding:
            await clock.sleep(period)
        else:
            deadline = max(deadline + period, clock.monotonic())
            await clock.sleep_until(deadline)

    if not at_once:
        await wait()
    while True:
        if on_failure is None:
            await run_pass()
        else:
            try:
                await run_pass()
            except Exception as exc:
                on_failure(exc)
        await wait()

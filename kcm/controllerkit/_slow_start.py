"""Slow-start batching: run a call ``count`` times in batches of 1, 2, 4, ... (§0).

A controller that cannot create pods (quota, admission, a broken API) then fails one call,
not hundreds; a healthy one needs about log2(count) + 1 rounds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

__all__ = ["SLOW_START_INITIAL_BATCH_SIZE", "slow_start_batch"]

SLOW_START_INITIAL_BATCH_SIZE = 1
"""client-go's ``SlowStartInitialBatchSize``."""


async def slow_start_batch(
    count: int,
    fn: Callable[[], Awaitable[None]],
    *,
    initial_batch_size: int = SLOW_START_INITIAL_BATCH_SIZE,
) -> tuple[int, Exception | None]:
    """Await ``fn()`` ``count`` times: concurrently within a batch, batches doubling in size,
    stopping after the first batch in which any call raised.

    Args:
        count: how many calls in total.
        fn: the call; an ``Exception`` it raises counts as a failure (cancellation propagates).
        initial_batch_size: the size of the first batch.

    Returns:
        ``(successes, first_error)``: how many calls succeeded, and the first error of the
        failing batch (None when every call succeeded). ``count - successes`` calls failed or
        were never made.
    """

    async def call(errors: list[Exception]) -> None:
        try:
            await fn()
        except Exception as exc:
            errors.append(exc)

    remaining = count
    successes = 0
    batch = min(remaining, initial_batch_size)
    while batch > 0:
        errors: list[Exception] = []
        async with anyio.create_task_group() as tg:
            for _ in range(batch):
                tg.start_soon(call, errors)
        successes += batch - len(errors)
        if errors:
            return successes, errors[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None

"""``eventually``: wait for a condition that changes behind real I/O, with a deadline."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["eventually"]


async def eventually(
    check: Callable[[], object | Awaitable[object]],
    *,
    within: float = 10.0,
    interval: float = 0.01,
) -> None:
    """Call ``check`` (plain or async) until it returns something true.

    For state that changes behind HTTP round trips to an API server (its objects, a
    controller's cache), where there is no event to wait on: gomega's ``Eventually``. Time
    that a test controls belongs on a :class:`FakeClock` instead; this polls in real time.

    Raises:
        TimeoutError: ``check`` was still false after ``within`` real seconds.
    """
    with anyio.fail_after(within):
        while True:
            result = check()
            if inspect.isawaitable(result):
                result = await result
            if result:
                return
            await anyio.sleep(interval)

"""Informer -> handler delivery: CPU per notification with ten handlers that keep up.

Ten handlers are registered on one informer's listeners; 20,000 live updates are pushed one at
a time, each followed by the two yields of the informer's loop, so every handler is idle when
its next notification comes (the common case in a controller manager: watch events trickle in
one by one). Before handlers that keep up were called directly, each notification woke the
handler's own task (an Event, a task switch); now the informer calls them in place.

Run: ``python benchmarks/handler_delivery.py`` (prints microseconds of CPU per delivery, on
asyncio and trio; run it on two checkouts to compare them).
"""

from __future__ import annotations

import time

import anyio
import anyio.lowlevel

from kcm.informers._handlers import _UPDATE, ResourceEventHandlerFuncs, _Listener
from kcm.models import ObjectKey

HANDLERS = 10
UPDATES = 20_000


async def per_delivery() -> float:
    """Microseconds of process CPU per handler notification."""
    delivered = 0

    def on_update(old: object, new: object) -> None:
        nonlocal delivered
        delivered += 1

    listeners = [
        _Listener(ResourceEventHandlerFuncs(on_update=on_update), resync_period=0, coalesce=False)
        for _ in range(HANDLERS)
    ]
    key = ObjectKey("default", "a")
    async with anyio.create_task_group() as tg:
        for listener in listeners:
            tg.start_soon(listener.run)
        await anyio.wait_all_tasks_blocked()
        start = time.process_time()
        for i in range(UPDATES):
            note = (_UPDATE, i, i, False)
            for listener in listeners:
                listener.push(key, note)
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
        await anyio.wait_all_tasks_blocked()
        seconds = time.process_time() - start
        tg.cancel_scope.cancel()
    assert delivered == HANDLERS * UPDATES
    return seconds / delivered * 1e6


def main() -> None:
    for backend in ("asyncio", "trio"):
        micros = anyio.run(per_delivery, backend=backend)
        print(f"{backend:<8} {micros:6.2f} us of CPU per delivery ({HANDLERS} handlers)")


if __name__ == "__main__":
    main()

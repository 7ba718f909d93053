"""Stopping controllers at the end of an integration test, without polling.

Cancelling a controller's run lets the reconciles in flight finish (its drain); the drain ends
by itself when the last one calls ``done()``, also when that key was added again meanwhile
(``test_drain_ends_when_the_last_key_in_flight_is_done_though_it_was_added_again``). So a
harness only cancels and waits, on the events its run wrappers set when ``run`` returns, with
a real-time bound in case a reconcile waits on a fake clock nobody advances any more.
"""

from __future__ import annotations

import anyio

__all__ = ["stop_controllers"]


_TIMEOUT = 10.0


async def stop_controllers(scope: anyio.CancelScope, *stopped: anyio.Event) -> None:
    """Cancel ``scope`` (the one the controllers run in) and wait until each ``stopped`` event
    is set (each controller's run has returned).

    Raises:
        TimeoutError: a run had not returned after 10 seconds of real time (a
            reconcile stuck on something the test no longer drives).
    """
    scope.cancel()
    with anyio.CancelScope(shield=True), anyio.fail_after(_TIMEOUT):
        for event in stopped:
            await event.wait()

"""Graceful shutdown that can still be cut short: shields a hard stop breaks (C23, C24).

Stopping a runnable is cancellation. A runnable that wants to finish work in flight (a
controller letting its reconciles end) shields that work from the cancellation. A shield
would also hide it from the manager's deadline and from leadership loss, which must stop it
at once (controller-runtime gives no grace after leader loss). So such shields are
registered with the :class:`HardStop` of the task that runs them: :meth:`HardStop.stop`
cancels every shield registered below it, and any shield entered afterwards starts cancelled.

The manager binds one :class:`HardStop` to everything it runs (stopped when
``graceful_shutdown_timeout`` runs out, or by :meth:`~kcm.runtime.Manager.force_stop`) and a
child one per leadership term (stopped when leadership is lost). Outside a manager there is
none and :func:`graceful_shield` is a plain shield.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import final

import anyio

__all__ = ["HardStop", "breakable", "graceful_shield"]


@final
class HardStop:
    """A set of shielded scopes to cancel at once when waiting for them is over.

    Args:
        parent: stopping the parent stops this one too.
    """

    __slots__ = ("_parent", "_scopes", "_stopped")

    def __init__(self, parent: HardStop | None = None) -> None:
        self._parent = parent
        self._scopes: set[anyio.CancelScope] = set()
        self._stopped = False

    @property
    def stopped(self) -> bool:
        """True once this stop (or an ancestor's) fired."""
        return any(stop._stopped for stop in self._chain())

    def stop(self) -> None:
        """Cancel every scope registered with this stop or a descendant; idempotent."""
        self._stopped = True
        for scope in list(self._scopes):
            scope.cancel()

    @contextmanager
    def bound(self) -> Iterator[None]:
        """Make this the hard stop of the current task (and of the tasks it starts)."""
        token = _current.set(self)
        try:
            yield
        finally:
            _current.reset(token)

    def _chain(self) -> Iterator[HardStop]:
        stop: HardStop | None = self
        while stop is not None:
            yield stop
            stop = stop._parent

    @contextmanager
    def _registered(self, scope: anyio.CancelScope) -> Iterator[None]:
        if self.stopped:
            scope.cancel()
        chain = list(self._chain())
        for stop in chain:
            stop._scopes.add(scope)
        try:
            yield
        finally:
            for stop in chain:
                stop._scopes.discard(scope)


_current: ContextVar[HardStop | None] = ContextVar("kcm_runtime_hard_stop", default=None)


@contextmanager
def breakable(scope: anyio.CancelScope) -> Iterator[anyio.CancelScope]:
    """While in this block, the current hard stop (if any) cancels ``scope``, shielded or not.

    ``scope`` may be entered elsewhere (another task); it is registered, not entered.
    """
    stop = _current.get()
    if stop is None:
        yield scope
        return
    with stop._registered(scope):
        yield scope


@contextmanager
def graceful_shield() -> Iterator[anyio.CancelScope]:
    """A shielded cancel scope for cleanup that a hard stop still cancels.

    Use it instead of ``anyio.CancelScope(shield=True)`` in a runnable's shutdown path: the
    cleanup then survives the cancellation that starts a graceful shutdown, but not the
    manager's ``graceful_shutdown_timeout`` running out, leadership loss, or
    :meth:`~kcm.runtime.Manager.force_stop` (a plain shield would make the manager wait for
    it). Outside a manager it is a plain shield. Yields the scope (``cancelled_caught`` tells
    whether the cleanup was cut short).
    """
    scope = anyio.CancelScope(shield=True)
    with breakable(scope), scope:
        yield scope

"""The reconcile contract: a key in, a :class:`Result` (or an exception) out (C1, C2)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Hashable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, Protocol, TypeAlias, TypeVar, final

from kcm.errors import KcmError
from kcm.models import ObjectKey

__all__ = [
    "ReconcileContext",
    "ReconcileFunc",
    "Reconciler",
    "Request",
    "Result",
    "TerminalError",
    "current_reconcile",
    "is_terminal",
]

K = TypeVar("K")
K_contra = TypeVar("K_contra", contravariant=True)

Request: TypeAlias = ObjectKey
"""What a reconciler is asked to look at: ``ObjectKey(namespace, name)``, no event, no object.

Reconciling is level-based: read the current state (from a lister) and make the world match it.
The same key may be reconciled many times; every run must be idempotent."""


@final
@dataclass(frozen=True, slots=True)
class Result:
    """What to do with the key after a successful reconcile (C2).

    Attributes:
        requeue_after: reconcile the key again after this many seconds (its backoff is reset
            first). Use it for polling external state or a time-based condition.
        requeue: reconcile the key again after the rate limiter's backoff, without resetting
            it (controller-runtime's deprecated ``Requeue``; prefer ``requeue_after`` or an
            exception). Ignored if ``requeue_after`` is set.

    ``Result()`` means done: the backoff is reset and the key waits for the next event.

    Raises:
        ValueError: ``requeue_after`` is negative or not finite.
    """

    requeue: bool = False
    requeue_after: float | None = None

    def __post_init__(self) -> None:
        after = self.requeue_after
        if after is not None and (after < 0 or not math.isfinite(after)):
            raise ValueError(f"requeue_after must be a finite number >= 0, got {after!r}")


class Reconciler(Protocol[K_contra]):
    """Makes the world match the desired state of one object.

    ``reconcile`` is called with a key (usually a :data:`Request`) and either returns a
    :class:`Result` or raises. A raised exception is logged with the key and the key is retried
    with per-key exponential backoff, unless it is (or is caused by) a :class:`TerminalError`.

    Guarantees (from the controller):
        * Never called twice at the same time for the same key.
        * If the key changes while it is being reconciled, it is reconciled once more
          afterwards (events are never lost, only merged).
    """

    async def reconcile(self, request: K_contra) -> Result: ...


@final
class ReconcileFunc(Generic[K]):
    """A :class:`Reconciler` from a plain ``async def reconcile(request) -> Result`` function
    (controller-runtime's ``reconcile.Func``)."""

    __slots__ = ("_func",)

    def __init__(self, func: Callable[[K], Awaitable[Result]]) -> None:
        self._func = func

    def __repr__(self) -> str:
        return f"ReconcileFunc({getattr(self._func, '__qualname__', self._func)!r})"

    async def reconcile(self, request: K) -> Result:
        return await self._func(request)


class TerminalError(KcmError):
    """Reconciling failed in a way a retry cannot fix: log it, count it, do not requeue.

    Raise it directly (``raise TerminalError("spec.replicas must be >= 0")``) or as the cause of
    another error (``raise SomeError(...) from TerminalError(...)``). The key is reconciled again
    only when a new event arrives for it.
    """

    retryable = False


def is_terminal(exc: BaseException) -> bool:
    """True if ``exc`` is a :class:`TerminalError`, has one in its ``__cause__`` chain, or is an
    exception group (from a task group in the reconciler) whose every member is terminal."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, TerminalError):
            return True
        if isinstance(current, BaseExceptionGroup):
            return all(is_terminal(member) for member in current.exceptions)
        seen.add(id(current))
        current = current.__cause__
    return False


@final
@dataclass(frozen=True, slots=True)
class ReconcileContext:
    """Which reconcile the current task is running (C4), for logs and traces.

    Attributes:
        controller: the controller's name.
        key: the key being reconciled.
        reconcile_id: a fresh UUID per reconcile call; the controller's error log carries it.
    """

    controller: str
    key: Hashable
    reconcile_id: str


_current: ContextVar[ReconcileContext | None] = ContextVar("kcm_reconcile", default=None)


def current_reconcile() -> ReconcileContext | None:
    """The reconcile running in this task, or None outside a reconcile. Tasks a reconciler
    starts inherit it (context variables are copied into new tasks)."""
    return _current.get()

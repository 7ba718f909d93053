"""The common constructor of a controller that does not fit :class:`QueueController` (two
queues, no runtime controller, the runtime's own retry policy, a recorder it cannot do
without) but takes the same options: the client, event recorder and clock its syncs write
with, and its worker count and metrics registry."""

from __future__ import annotations

from typing import ClassVar, Required, TypedDict, TypeVar, Unpack

from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.record import EventRecorder
from kcm.runtime import Controller, Reconciler
from kcm.workqueue import RateLimiter

__all__ = ["ControllerBase", "ControllerOptions"]

K = TypeVar("K")


class ControllerOptions(TypedDict, total=False):
    """The common keyword arguments of a :class:`ControllerBase` (what
    :func:`kcm.controllers.add_controller` passes): a subclass takes them as
    ``**options: Unpack[ControllerOptions]`` and hands them on to ``super().__init__``."""

    recorder: Required[EventRecorder]
    """Where the controller's events go (:attr:`ControllerBase.recorder`)."""
    clock: Clock
    """The clock of its queues, timestamps and requeues (default: the system clock)."""
    workers: int
    """Concurrent syncs (default: the class's :attr:`ControllerBase.default_workers`), kept as
    ``self._workers``."""
    registry: CollectorRegistry | None
    """A Prometheus registry for its metrics (default None: none), kept as
    ``self._registry``."""


class ControllerBase:
    """Keeps the common options of a controller's constructor and shows them read-only, for
    the controller and the per-sync helpers it hands itself to.

    A subclass sets :attr:`default_workers` (kube's count), takes its own options before
    ``**options: Unpack[ControllerOptions]``, calls ``super().__init__(client, **options)``
    first, then builds its queues with :meth:`new_controller` (or from ``self._workers``,
    :attr:`clock` and ``self._registry``).

    Args:
        client: the API client (:attr:`client`).
        options: :class:`ControllerOptions`.
    """

    default_workers: ClassVar[int] = 1
    """Workers when the ``workers`` option is not given (kube-controller-manager's count)."""

    def __init__(self, client: ApiClient, **options: Unpack[ControllerOptions]) -> None:
        self._client = client
        self._recorder = options["recorder"]
        self._clock = options.get("clock", SYSTEM_CLOCK)
        self._workers = options.get("workers", self.default_workers)
        self._registry = options.get("registry")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} workers={self._workers}>"

    def new_controller(
        self,
        name: str,
        reconciler: Reconciler[K],
        *,
        rate_limiter: RateLimiter[K] | None = None,
    ) -> Controller[K]:
        """A runtime controller (a work queue named ``name`` and the ``workers`` option's
        workers calling ``reconciler``) on :attr:`clock`, reporting to the ``registry``
        option's registry, retrying with ``rate_limiter`` (default: the runtime's)."""
        return Controller(
            name,
            reconciler,
            max_concurrent_reconciles=self._workers,
            rate_limiter=rate_limiter,
            clock=self._clock,
            metrics=self._registry,
        )

    @property
    def client(self) -> ApiClient:
        """The API client."""
        return self._client

    @property
    def recorder(self) -> EventRecorder:
        """The event recorder."""
        return self._recorder

    @property
    def clock(self) -> Clock:
        """The clock."""
        return self._clock

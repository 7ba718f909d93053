"""The skeleton of a controller whose informer events queue object keys that workers reconcile.

Most of kube-controller-manager's single-kind controllers (the PV and PVC protection, the
ServiceAccount and root CA publishers, the bootstrap signer, the CSR approver and signer, ...)
are the same machine around their own sync: the common constructor arguments, one
:class:`~kcm.runtime.Controller` (a rate-limited key queue and N workers) fed by their
informers, ``run`` and ``reconcile``. :class:`QueueController` is that machine; a subclass
names its queue, says which informer events queue which keys (:meth:`watch_informers`) and
writes ``reconcile``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, TypedDict, TypeVar, Unpack

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.informers import KubeObject, Lister, SharedIndexInformer, SharedInformerFactory
from kcm.models import ObjectKey
from kcm.record import EventRecorder
from kcm.runtime import Controller, EventHandler, Result
from kcm.workqueue import RateLimiter, default_controller_rate_limiter

__all__ = ["QueueController", "QueueControllerOptions"]

T = TypeVar("T", bound=KubeObject)


class QueueControllerOptions(TypedDict, total=False):
    """The common keyword arguments of a :class:`QueueController` (what
    :func:`kcm.controllers.add_controller` passes): a subclass takes them as
    ``**options: Unpack[QueueControllerOptions]`` and hands them on to ``super().__init__``."""

    recorder: EventRecorder | None
    """Kept as ``self._recorder`` (default None: no events)."""
    clock: Clock
    """The queue's backoff and ``requeue_after`` clock, kept as ``self._clock`` (default: the
    system clock)."""
    workers: int
    """Concurrent reconciles (default: the class's :attr:`QueueController.default_workers`)."""
    registry: CollectorRegistry | None
    """A Prometheus registry for the controller and queue metrics (default None: none)."""


class QueueController(ABC):
    """A controller whose informer events put :class:`~kcm.models.ObjectKey` s into one
    rate-limited queue that ``workers`` tasks drain through :meth:`reconcile`.

    A subclass sets :attr:`queue_name` (and :attr:`default_workers` or :attr:`fixed_workers`,
    or overrides :meth:`rate_limiter` when kube's queue is not the default one), and writes
    :meth:`watch_informers` (with :meth:`watch`) and :meth:`reconcile`. One with options of
    its own takes them before ``**options: Unpack[QueueControllerOptions]``, keeps them, then
    calls ``super().__init__(client, factory, **options)``.

    Args:
        client: the API client, kept as ``self._client``.
        factory: where the informers come from (handed to :meth:`watch_informers`).
        options: :class:`QueueControllerOptions`.

    Attributes:
        controller: the runtime controller (queue, workers, metrics); tests wait on its
            :meth:`~kcm.runtime.Controller.wait_idle`.

    Raises:
        ValueError: ``workers < 1``, or a live controller reports to ``registry`` under the
            same :attr:`queue_name`.
    """

    queue_name: ClassVar[str]
    """Names the work queue and labels the metrics (kube-controller-manager's queue name)."""
    default_workers: ClassVar[int] = 1
    """Workers when the ``workers`` option is not given (kube-controller-manager's count)."""
    fixed_workers: ClassVar[int | None] = None
    """Workers whatever the ``workers`` option says, for a controller kube runs with a fixed
    count (the bootstrap signer and the token cleaner run one)."""

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        **options: Unpack[QueueControllerOptions],
    ) -> None:
        clock = options.get("clock", SYSTEM_CLOCK)
        self._client = client
        self._recorder = options.get("recorder")
        self._clock = clock
        workers = self.fixed_workers
        if workers is None:
            workers = options.get("workers", self.default_workers)
        self.controller: Controller[ObjectKey] = Controller(
            self.queue_name,
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=self.rate_limiter(clock),
            clock=clock,
            metrics=options.get("registry"),
        )
        self.watch_informers(factory)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def rate_limiter(self, clock: Clock) -> RateLimiter[ObjectKey]:
        """The queue's retry policy: client-go's ``DefaultControllerRateLimiter`` unless a
        subclass says otherwise."""
        return default_controller_rate_limiter(clock=clock)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Reconcile until cancelled (started once the watched caches have synced)."""
        await self.controller.run(task_status=task_status)

    def watch(
        self,
        informer: SharedIndexInformer[T],
        handler: EventHandler[T],
        *,
        kind: str | None = None,
    ) -> Lister[T]:
        """Queue the keys ``handler`` maps ``informer``'s events to
        (:meth:`kcm.runtime.Controller.watch`; ``kind`` names it in a cache sync timeout) and
        return the informer's lister, the cache :meth:`reconcile` reads."""
        self.controller.watch(informer, handler, kind=kind)
        return informer.lister()

    @abstractmethod
    def watch_informers(self, factory: SharedInformerFactory) -> None:
        """Take this controller's informers from ``factory`` (keeping the listers it reads)
        and feed :attr:`controller` from them with ``self.controller.watch(informer,
        handler, kind=...)`` or :meth:`watch`; the constructor calls it once."""

    @abstractmethod
    async def reconcile(self, request: ObjectKey) -> Result:
        """Bring the object behind ``request`` to where it should be (raise to retry it with
        backoff)."""

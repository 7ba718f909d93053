"""A controller that is a :class:`ReplicaManager` on one kind: the common shape of the
ReplicaSet and ReplicationController controllers (and of your own)."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.informers import SharedInformerFactory
from kcm.record import EventRecorder
from kcm.runtime import HasMetadata

from ._expectations import UIDTrackingControllerExpectations
from ._replica_manager import BURST_REPLICAS, ReplicaKind, ReplicaManager

__all__ = ["ReplicaController"]

W = TypeVar("W", bound=HasMetadata)


class ReplicaController(Generic[W]):
    """Keeps ``spec.replicas`` pods of every object of :attr:`kind` running, with a
    :class:`ReplicaManager` (:attr:`manager`) whose work queue is named :attr:`queue_name`.
    A subclass sets the two class attributes; the constructor is the common one
    (``add_controller`` in ``kcm.controllers`` builds it).

    Args:
        client: the API client.
        factory: the shared informer factory (the owner and Pod informers).
        recorder: event sink (``SuccessfulCreate``, ``FailedCreate``, ``SuccessfulDelete``,
            ``FailedDelete`` on the owner).
        clock: work queue and availability clock.
        workers: concurrent syncs.
        registry: Prometheus registry for metrics (None: none).
        burst_replicas: most pods created or deleted per sync (500).
    """

    kind: ClassVar[ReplicaKind[Any]]
    """The owner kind."""
    queue_name: ClassVar[str]
    """The work queue's (and metrics') name, Go's."""

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 5,
        registry: CollectorRegistry | None = None,
        burst_replicas: int = BURST_REPLICAS,
    ) -> None:
        self.manager: ReplicaManager[W] = ReplicaManager(
            client,
            factory,
            self.kind,
            name=self.queue_name,
            recorder=recorder,
            clock=clock,
            workers=workers,
            registry=registry,
            burst_replicas=burst_replicas,
        )

    @property
    def expectations(self) -> UIDTrackingControllerExpectations:
        """The outstanding creates/deletes per owner key."""
        return self.manager.expectations

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync owners until cancelled (the factory must run too; the manager runs it)."""
        await self.manager.run(task_status=task_status)

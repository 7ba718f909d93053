"""A controller that is a :class:`ReplicaManager` on one kind: the common shape of the
ReplicaSet and ReplicationController controllers (and of your own)."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Required, TypedDict, TypeVar, Unpack

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import Clock
from kcm.informers import SharedInformerFactory
from kcm.record import EventRecorder
from kcm.runtime import HasMetadata

from ._expectations import UIDTrackingControllerExpectations
from ._replica_manager import ReplicaKind, ReplicaManager

__all__ = ["ReplicaController", "ReplicaControllerOptions"]

W = TypeVar("W", bound=HasMetadata)


class ReplicaControllerOptions(TypedDict, total=False):
    """The keyword arguments of a :class:`ReplicaController`, handed to its
    :class:`ReplicaManager` (the common ones ``add_controller`` in ``kcm.controllers`` passes,
    and ``burst_replicas``)."""

    recorder: Required[EventRecorder]
    """Event sink (``SuccessfulCreate``, ``FailedCreate``, ``SuccessfulDelete``,
    ``FailedDelete`` on the owner)."""
    clock: Clock
    """Work queue and availability clock (default: the system clock)."""
    workers: int
    """Concurrent syncs (default 5)."""
    registry: CollectorRegistry | None
    """Prometheus registry for metrics (default None: none)."""
    burst_replicas: int
    """Most pods created or deleted per sync (default 500)."""


class ReplicaController(Generic[W]):
    """Keeps ``spec.replicas`` pods of every object of :attr:`kind` running, with a
    :class:`ReplicaManager` (:attr:`manager`) whose work queue is named :attr:`queue_name`.
    A subclass sets the two class attributes.

    Args:
        client: the API client.
        factory: the shared informer factory (the owner and Pod informers).
        options: :class:`ReplicaControllerOptions`.
    """

    kind: ClassVar[ReplicaKind[Any]]
    """The owner kind."""
    queue_name: ClassVar[str]
    """The work queue's (and metrics') name, Go's."""

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        **options: Unpack[ReplicaControllerOptions],
    ) -> None:
        self.manager: ReplicaManager[W] = ReplicaManager(
            client, factory, self.kind, name=self.queue_name, **options
        )

    @property
    def expectations(self) -> UIDTrackingControllerExpectations:
        """The outstanding creates/deletes per owner key."""
        return self.manager.expectations

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync owners until cancelled (the factory must run too; the manager runs it)."""
        await self.manager.run(task_status=task_status)

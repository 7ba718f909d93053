"""The ReplicaSet controller: the kit's :class:`~kcm.controllerkit.ReplicaManager` on
apps/v1 ReplicaSets (kube-controller-manager's ``pkg/controller/replicaset``)."""

from __future__ import annotations

from typing import final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import (
    BURST_REPLICAS,
    ReplicaKind,
    ReplicaManager,
    UIDTrackingControllerExpectations,
)
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import ReplicaSet, ReplicaSetCondition, ReplicaSetStatus
from kcm.record import EventRecorder
from kcm.selectors import LabelSelector

__all__ = ["DEFAULT_WORKERS", "REPLICA_SET_KIND", "ReplicaSetController"]


def _replica_set_selector(rs: ReplicaSet) -> LabelSelector:
    return LabelSelector.from_model(rs.spec.selector if rs.spec else None)


REPLICA_SET_KIND: ReplicaKind[ReplicaSet] = ReplicaKind(
    model=ReplicaSet,
    api_version="apps/v1",
    kind="ReplicaSet",
    selector=_replica_set_selector,
    status_type=ReplicaSetStatus,
    condition_type=ReplicaSetCondition,
)
"""apps/v1 ReplicaSet."""


DEFAULT_WORKERS = 5
"""``--concurrent-replicaset-syncs``."""


@final
class ReplicaSetController:
    """kube-controller-manager's ``replicaset`` controller: keeps ``spec.replicas`` pods of
    every ReplicaSet running (see :class:`~kcm.controllerkit.ReplicaManager` for the behaviour).

    Args:
        client: the API client.
        factory: the shared informer factory (ReplicaSet and Pod informers).
        recorder: event sink (``SuccessfulCreate``, ``FailedCreate``, ``SuccessfulDelete``,
            ``FailedDelete`` on the ReplicaSet).
        clock: work queue and availability clock.
        workers: concurrent ReplicaSet syncs (``--concurrent-replicaset-syncs``, 5).
        registry: Prometheus registry for metrics (None: none).
        burst_replicas: most pods created or deleted per sync (500).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = DEFAULT_WORKERS,
        registry: CollectorRegistry | None = None,
        burst_replicas: int = BURST_REPLICAS,
    ) -> None:
        self.manager: ReplicaManager[ReplicaSet] = ReplicaManager(
            client,
            factory,
            REPLICA_SET_KIND,
            name="replicaset",
            recorder=recorder,
            clock=clock,
            workers=workers,
            registry=registry,
            burst_replicas=burst_replicas,
        )

    @property
    def expectations(self) -> UIDTrackingControllerExpectations:
        """The outstanding creates/deletes per ReplicaSet key."""
        return self.manager.expectations

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync ReplicaSets until cancelled (the factory must run too; the manager runs it)."""
        await self.manager.run(task_status=task_status)

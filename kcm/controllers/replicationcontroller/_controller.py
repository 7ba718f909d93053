"""The ReplicationController controller: the ReplicaSet machinery on core/v1 RCs.

kube-controller-manager runs the ReplicaSet code on ReplicationControllers through a
conversion layer; here the kit's :class:`~kcm.controllerkit.ReplicaManager` runs with a
:class:`~kcm.controllerkit.ReplicaKind` for ``v1/ReplicationController``,
whose selector is a plain label map.
"""

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
from kcm.models.core_v1 import (
    ReplicationController,
    ReplicationControllerCondition,
    ReplicationControllerStatus,
)
from kcm.record import EventRecorder
from kcm.selectors import LabelSelector

__all__ = ["DEFAULT_WORKERS", "REPLICATION_CONTROLLER_KIND", "ReplicationControllerController"]

DEFAULT_WORKERS = 5
"""``--concurrent_rc_syncs``."""


def _selector(rc: ReplicationController) -> LabelSelector:
    selector = rc.spec.selector if rc.spec else None
    if selector is None:
        return LabelSelector.nothing()  # the API server defaults it from the template labels
    return LabelSelector.from_labels(selector)


REPLICATION_CONTROLLER_KIND: ReplicaKind[ReplicationController] = ReplicaKind(
    model=ReplicationController,
    api_version="v1",
    kind="ReplicationController",
    selector=_selector,
    status_type=ReplicationControllerStatus,
    condition_type=ReplicationControllerCondition,
)
"""core/v1 ReplicationController (selector: ``spec.selector`` label map)."""


@final
class ReplicationControllerController:
    """kube-controller-manager's ``replicationcontroller`` controller: keeps
    ``spec.replicas`` pods of every ReplicationController running, exactly as the ReplicaSet
    controller does (slow start, expectations, ranking, adoption, status).

    Args:
        client: the API client.
        factory: the shared informer factory (ReplicationController and Pod informers).
        recorder: event sink (``SuccessfulCreate``, ``FailedCreate``, ``SuccessfulDelete``,
            ``FailedDelete`` on the ReplicationController).
        clock: work queue and availability clock.
        workers: concurrent syncs (``--concurrent_rc_syncs``, 5).
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
        self.manager: ReplicaManager[ReplicationController] = ReplicaManager(
            client,
            factory,
            REPLICATION_CONTROLLER_KIND,
            name="replicationmanager",  # Go's work queue name
            recorder=recorder,
            clock=clock,
            workers=workers,
            registry=registry,
            burst_replicas=burst_replicas,
        )

    @property
    def expectations(self) -> UIDTrackingControllerExpectations:
        """The outstanding creates/deletes per ReplicationController key."""
        return self.manager.expectations

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync ReplicationControllers until cancelled (the factory must run too)."""
        await self.manager.run(task_status=task_status)

"""The ReplicationController controller: the ReplicaSet machinery on core/v1 RCs.

kube-controller-manager runs the ReplicaSet code on ReplicationControllers through a
conversion layer; here the kit's :class:`~kcm.controllerkit.ReplicaManager` runs with a
:class:`~kcm.controllerkit.ReplicaKind` for ``v1/ReplicationController``,
whose selector is a plain label map.
"""

from __future__ import annotations

from typing import final

from kcm.controllerkit import ReplicaController, ReplicaKind
from kcm.models.core_v1 import (
    ReplicationController,
    ReplicationControllerCondition,
    ReplicationControllerStatus,
)
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
class ReplicationControllerController(ReplicaController[ReplicationController]):
    """kube-controller-manager's ``replicationcontroller`` controller: keeps
    ``spec.replicas`` pods of every ReplicationController running, exactly as the ReplicaSet
    controller does (slow start, expectations, ranking, adoption, status); the arguments are
    :class:`~kcm.controllerkit.ReplicaController`'s, ``workers`` being
    ``--concurrent_rc_syncs``."""

    kind = REPLICATION_CONTROLLER_KIND
    queue_name = "replicationmanager"  # Go's work queue name

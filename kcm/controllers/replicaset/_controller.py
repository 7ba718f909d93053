"""The ReplicaSet controller: the kit's :class:`~kcm.controllerkit.ReplicaManager` on
apps/v1 ReplicaSets (kube-controller-manager's ``pkg/controller/replicaset``)."""

from __future__ import annotations

from typing import final

from kcm.controllerkit import ReplicaController, ReplicaKind
from kcm.models.apps_v1 import ReplicaSet, ReplicaSetCondition, ReplicaSetStatus
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
class ReplicaSetController(ReplicaController[ReplicaSet]):
    """kube-controller-manager's ``replicaset`` controller: keeps ``spec.replicas`` pods of
    every ReplicaSet running (see :class:`~kcm.controllerkit.ReplicaManager` for the behaviour;
    the arguments are :class:`~kcm.controllerkit.ReplicaController`'s, ``workers`` being
    ``--concurrent-replicaset-syncs``)."""

    kind = REPLICA_SET_KIND
    queue_name = "replicaset"

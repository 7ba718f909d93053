"""ReplicaSets: one replica by default."""

from __future__ import annotations

from ..._store import Obj
from .workloads import WorkloadStrategy

__all__ = ["ReplicaSetStrategy"]


class ReplicaSetStrategy(WorkloadStrategy):
    """kube-apiserver's ``pkg/registry/apps/replicaset`` (defaults and validation)."""

    selector_owner = "deployment"  # sic: kube-apiserver's ReplicaSet message says so

    status_zero = {"replicas": 0}
    status_omitempty = (
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    )

    def default(self, obj: Obj) -> None:
        super().default(obj)
        obj.setdefault("spec", {}).setdefault("replicas", 1)

"""ReplicaSets: one replica by default."""

from __future__ import annotations

from ..._store import Obj
from .._context import Context
from .workloads import WorkloadStrategy

__all__ = ["ReplicaSetStrategy"]


class ReplicaSetStrategy(WorkloadStrategy):
    """kube-apiserver's ``pkg/registry/apps/replicaset`` (defaults and validation)."""

    selector_owner = "deployment"  # sic: kube-apiserver's ReplicaSet message says so

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        obj.setdefault("spec", {}).setdefault("replicas", 1)

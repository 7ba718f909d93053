"""StatefulSets: their defaults (one replica, ordered pod management, rolling updates from
partition 0, ten revisions) and claim templates defaulted as claims."""

from __future__ import annotations

from ..._store import Obj
from .._base import zero_template_meta
from ..core.claims import default_claim
from .workloads import WorkloadStrategy

__all__ = ["StatefulSetStrategy"]


class StatefulSetStrategy(WorkloadStrategy):
    """kube-apiserver's ``pkg/registry/apps/statefulset`` (defaults and validation)."""

    selector_owner = "statefulset"
    status_zero = {"replicas": 0, "availableReplicas": 0}
    status_omitempty = ("observedGeneration", "readyReplicas", "currentReplicas", "updatedReplicas")

    def default(self, obj: Obj) -> None:
        """``SetDefaults_StatefulSet`` (the claim retention policy is 1.27's: not set)."""
        super().default(obj)
        spec = obj.setdefault("spec", {})
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        update = spec.get("updateStrategy")
        if not isinstance(update, dict):
            update = spec["updateStrategy"] = {}
        if not update.get("type"):
            update["type"] = "RollingUpdate"
            update.setdefault("rollingUpdate", {})
        rolling = update.get("rollingUpdate")
        if update["type"] == "RollingUpdate" and isinstance(rolling, dict):
            rolling.setdefault("partition", 0)
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        for claim in spec.get("volumeClaimTemplates") or []:
            default_claim(claim)

    def canonicalize(self, obj: Obj) -> None:
        super().canonicalize(obj)
        for claim in (obj.get("spec") or {}).get("volumeClaimTemplates") or []:
            zero_template_meta(claim)
            if isinstance(claim, dict):  # apps/v1 conversion writes each claim's TypeMeta
                claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"

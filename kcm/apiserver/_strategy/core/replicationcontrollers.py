"""ReplicationControllers: one replica by default."""

from __future__ import annotations

from ..._store import Obj
from .._base import Strategy

__all__ = ["ReplicationControllerStrategy"]


class ReplicationControllerStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/replicationcontroller`` (its defaults)."""

    manages_generation = True

    status_zero = {"replicas": 0}
    status_omitempty = (
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    )

    def default(self, obj: Obj) -> None:
        """``SetDefaults_ReplicationController``: selector and labels from the template."""
        super().default(obj)
        spec = obj.setdefault("spec", {})
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
        if labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            if not obj["metadata"].get("labels"):
                obj["metadata"]["labels"] = dict(labels)
        spec.setdefault("replicas", 1)

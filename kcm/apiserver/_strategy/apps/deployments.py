"""Deployments: replicas, history, deadline and rolling-update defaults."""

from __future__ import annotations

from ..._store import Obj
from .._context import Context
from .workloads import WorkloadStrategy

__all__ = ["DeploymentStrategy"]


class DeploymentStrategy(WorkloadStrategy):
    """kube-apiserver's ``pkg/registry/apps/deployment`` (defaults and validation)."""

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strategy = spec.setdefault("strategy", {})
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        """The spec or the annotations changed (a rollback request was one, once)."""
        annotations_changed = new["metadata"].get("annotations") != old["metadata"].get(
            "annotations"
        )
        return annotations_changed or super().generation_changed(new, old)

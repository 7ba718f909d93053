"""DaemonSets: validated as workloads, without replicas; rolling updates one pod at a time by
default, and the template's generation kept in an annotation."""

from __future__ import annotations

from typing import Final

from ..._store import Obj
from .._context import Context
from .workloads import WorkloadStrategy

__all__ = ["DaemonSetStrategy"]

_TEMPLATE_GENERATION: Final = "deprecated.daemonset.template.generation"


class DaemonSetStrategy(WorkloadStrategy):
    """kube-apiserver's ``pkg/registry/apps/daemonset`` (defaults and validation)."""

    selector_owner = "daemonset"
    has_replicas = False
    status_zero = {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }
    status_omitempty = (
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
    )

    def default(self, obj: Obj) -> None:
        """``SetDefaults_DaemonSet``."""
        super().default(obj)
        spec = obj.setdefault("spec", {})
        update = spec.get("updateStrategy")
        if not isinstance(update, dict):
            update = spec["updateStrategy"] = {}
        if not update.get("type"):
            update["type"] = "RollingUpdate"
        if update["type"] == "RollingUpdate":
            rolling = update.get("rollingUpdate")
            if not isinstance(rolling, dict):
                rolling = update["rollingUpdate"] = {}
            rolling.setdefault("maxUnavailable", 1)
            rolling.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        """The template is at generation 1 (``spec.templateGeneration`` in the internal API,
        an annotation in apps/v1)."""
        super().prepare_for_create(obj, ctx)
        annotations = obj["metadata"].setdefault("annotations", {})
        annotations[_TEMPLATE_GENERATION] = "1"

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        """A new template is a new template generation; a client cannot set it."""
        new = super().prepare_for_update(new, old)
        previous = (old["metadata"].get("annotations") or {}).get(_TEMPLATE_GENERATION)
        template_changed = (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get(
            "template"
        )
        annotations = new["metadata"].get("annotations")
        if previous is not None:
            generation = int(previous) + 1 if template_changed else int(previous)
            if not isinstance(annotations, dict):
                annotations = new["metadata"]["annotations"] = {}
            annotations[_TEMPLATE_GENERATION] = str(generation)
        return new

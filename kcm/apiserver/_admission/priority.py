"""``Priority``: a pod's ``priority`` comes from its PriorityClass, never from the client.

Without ``priorityClassName`` a pod gets the global default class, or priority 0 and
``preemptionPolicy: PreemptLowerPriority`` when there is none; a class that does not exist, or
a ``priority`` that differs from the class's value, is a 403. kube-apiserver creates the two
system classes at start-up; kcm knows their values without storing them.
"""

from __future__ import annotations

from typing import Any, Final

from .._status import StatusError
from .._store import Obj, Store
from ._plugin import Attributes, Plugin

__all__ = ["Priority", "admit_create", "admit_update"]

_SYSTEM_CLASSES: Final[dict[str, Obj]] = {
    "system-node-critical": {"value": 2000001000, "preemptionPolicy": "PreemptLowerPriority"},
    "system-cluster-critical": {"value": 2000000000, "preemptionPolicy": "PreemptLowerPriority"},
}


def _classes(store: Store) -> dict[str, Obj]:
    found = store.items(("scheduling.k8s.io", "priorityclasses"))
    return {c["metadata"]["name"]: c for c in found}


def _forbidden(pod: Obj, why: str) -> StatusError:
    return StatusError.forbidden("", "pods", pod["metadata"].get("name") or "", why)


def admit_create(store: Store, pod: Obj) -> None:
    """Set ``priority`` (and ``preemptionPolicy``) from the pod's class."""
    spec = pod.setdefault("spec", {})
    class_name = spec.get("priorityClassName") or ""
    policy: Any
    if not class_name:
        defaults = [c for c in _classes(store).values() if c.get("globalDefault")]
        chosen = min(defaults, key=lambda c: int(c.get("value") or 0), default=None)
        if chosen is None:
            value, policy = 0, "PreemptLowerPriority"
        else:
            spec["priorityClassName"] = chosen["metadata"]["name"]
            value, policy = int(chosen.get("value") or 0), chosen.get("preemptionPolicy")
    else:
        found: Obj | None = _classes(store).get(class_name) or _SYSTEM_CLASSES.get(class_name)
        if found is None:
            raise _forbidden(pod, f"no PriorityClass with name {class_name} was found")
        value, policy = int(found.get("value") or 0), found.get("preemptionPolicy")
    if spec.get("priority") is not None and spec["priority"] != value:
        raise _forbidden(
            pod,
            f"the integer value of priority ({spec['priority']}) must not be provided in pod "
            f"spec; priority admission controller computed {value} from the given "
            "PriorityClass name",
        )
    spec["priority"] = value
    if policy is not None:
        if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
            raise _forbidden(
                pod,
                f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not be "
                f"provided in pod spec; priority admission controller computed {policy} from "
                "the given PriorityClass name",
            )
        spec["preemptionPolicy"] = policy


def admit_update(pod: Obj, old: Obj) -> None:
    """An update keeps the priority set on create (validation refuses changing it)."""
    spec, before = pod.setdefault("spec", {}), old.get("spec") or {}
    for field in ("priority", "preemptionPolicy"):
        if spec.get(field) is None and before.get(field) is not None:
            spec[field] = before[field]


class Priority(Plugin):
    """The plugin: pod creates, and pod updates (not their subresources)."""

    name = "Priority"

    def admit(self, a: Attributes) -> None:
        if not a.is_pod:
            return
        if a.operation == "CREATE":
            admit_create(a.store, a.obj)
        elif not a.subresource and a.old is not None:
            admit_update(a.obj, a.old)

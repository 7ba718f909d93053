"""Taints and tolerations: which taints of a node a pod tolerates (``v1.Toleration.ToleratesTaint``,
``FindMatchingUntoleratedTaint``, ``AddOrUpdateTolerationInPodSpec``).

Shared by everything that places pods on nodes: the DaemonSet controller decides with it where
its pods should run (and keep running), a scheduler which nodes a pod may go to. Pure
functions over the models; the well-known taint keys the cluster's own components set are
here too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from kcm.models.core_v1 import Taint, Toleration

__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "TAINT_NODE_DISK_PRESSURE",
    "TAINT_NODE_MEMORY_PRESSURE",
    "TAINT_NODE_NETWORK_UNAVAILABLE",
    "TAINT_NODE_NOT_READY",
    "TAINT_NODE_PID_PRESSURE",
    "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE",
    "add_or_update_toleration",
    "taint_text",
    "tolerates_taint",
    "untolerated_taint",
]

NO_SCHEDULE = "NoSchedule"
"""Taint effect: no new pod that does not tolerate it is placed on the node."""
PREFER_NO_SCHEDULE = "PreferNoSchedule"
"""Taint effect: a scheduler avoids the node if it can (never a hard constraint)."""
NO_EXECUTE = "NoExecute"
"""Taint effect: NoSchedule, and pods already there that do not tolerate it are evicted."""

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
"""Taint key: the node's Ready condition is False (NoSchedule, then NoExecute: pods are evicted)."""
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
"""Taint key: the node's Ready condition is Unknown: its kubelet stopped reporting."""
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
"""Taint key: the node is cordoned (``spec.unschedulable``)."""
TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
"""Taint key: the node reports MemoryPressure."""
TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
"""Taint key: the node reports DiskPressure."""
TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
"""Taint key: the node reports PIDPressure."""
TAINT_NODE_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
"""Taint key: the node reports NetworkUnavailable (its routes are not set up)."""

_HARD_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)


def tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (``Toleration.ToleratesTaint``).

    An empty effect matches every effect and an empty key every key; operator ``Exists``
    matches every value, ``Equal`` (or none) the same value; any other operator nothing.
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in (None, "", "Equal"):
        return (toleration.value or "") == (taint.value or "")
    return toleration.operator == "Exists"


def untolerated_taint(
    taints: Iterable[Taint] | None,
    tolerations: Iterable[Toleration] | None,
    *,
    effects: Collection[str] = _HARD_EFFECTS,
) -> Taint | None:
    """The first taint with one of ``effects`` (default NoSchedule and NoExecute) that no
    toleration tolerates, or None (``FindMatchingUntoleratedTaint`` with an effect filter)."""
    tolerations = list(tolerations or ())
    for taint in taints or ():
        if taint.effect not in effects:
            continue
        if not any(tolerates_taint(t, taint) for t in tolerations):
            return taint
    return None


def _same_toleration(a: Toleration, b: Toleration) -> bool:
    """Same key, effect, operator and value; tolerationSeconds aside (``MatchToleration``)."""
    return (a.key, a.effect, a.operator, a.value) == (b.key, b.effect, b.operator, b.value)


def add_or_update_toleration(
    tolerations: Sequence[Toleration] | None, toleration: Toleration
) -> list[Toleration]:
    """``tolerations`` with ``toleration`` added, or put in place of the one that differs from
    it only in ``tolerationSeconds`` (``AddOrUpdateTolerationInPodSpec``); order kept, and
    unchanged when an equal one is there."""
    out: list[Toleration] = []
    replaced = False
    for existing in tolerations or ():
        if _same_toleration(existing, toleration):
            if existing == toleration:
                return list(tolerations or ())
            out.append(toleration)
            replaced = True
        else:
            out.append(existing)
    if not replaced:
        out.append(toleration)
    return out


def taint_text(taint: Taint) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as ``kubectl taint`` spells it."""
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"

"""The taints the node lifecycle controller owns, and the toleration arithmetic of evictions.

Condition taints (effect NoSchedule) mirror the node's conditions and ``spec.unschedulable``
so the scheduler keeps pods off; the two NoExecute taints (``not-ready``, ``unreachable``)
make the taint manager evict pods that do not tolerate them (§12). Only taints with these
keys are ever added or removed; anything else on the node is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import msgspec

from kcm.controllerkit import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_NODE_DISK_PRESSURE,
    TAINT_NODE_MEMORY_PRESSURE,
    TAINT_NODE_NETWORK_UNAVAILABLE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_PID_PRESSURE,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
    tolerates_taint,
)
from kcm.models import Node, Taint, Toleration

__all__ = [
    "NOT_READY_NO_EXECUTE",
    "UNREACHABLE_NO_EXECUTE",
    "condition_taint_diff",
    "has_taint",
    "label_updates",
    "matching_tolerations",
    "min_toleration_seconds",
    "no_execute_taints",
    "swap_taints",
]

NOT_READY_NO_EXECUTE = Taint(key=TAINT_NODE_NOT_READY, effect=NO_EXECUTE)
UNREACHABLE_NO_EXECUTE = Taint(key=TAINT_NODE_UNREACHABLE, effect=NO_EXECUTE)

_CONDITION_TAINTS: Mapping[str, Mapping[str, str]] = {
    "Ready": {"False": TAINT_NODE_NOT_READY, "Unknown": TAINT_NODE_UNREACHABLE},
    "MemoryPressure": {"True": TAINT_NODE_MEMORY_PRESSURE},
    "DiskPressure": {"True": TAINT_NODE_DISK_PRESSURE},
    "NetworkUnavailable": {"True": TAINT_NODE_NETWORK_UNAVAILABLE},
    "PIDPressure": {"True": TAINT_NODE_PID_PRESSURE},
}
_OWNED_NO_SCHEDULE = {k for by_status in _CONDITION_TAINTS.values() for k in by_status.values()}
_OWNED_NO_SCHEDULE.add(TAINT_NODE_UNSCHEDULABLE)

_LABEL_MIRRORS = (
    ("kubernetes.io/os", "beta.kubernetes.io/os"),
    ("kubernetes.io/arch", "beta.kubernetes.io/arch"),
)


def _taints(node: Node) -> list[Taint]:
    return list((node.spec.taints if node.spec else None) or ())


def _same(a: Taint, b: Taint) -> bool:
    """Same key and effect (``Taint.MatchTaint``)."""
    return a.key == b.key and a.effect == b.effect


def has_taint(node: Node, taint: Taint) -> bool:
    """Whether the node has a taint with ``taint``'s key and effect."""
    return any(_same(t, taint) for t in _taints(node))


def no_execute_taints(node: Node | None) -> list[Taint]:
    """The node's NoExecute taints."""
    return [t for t in _taints(node) if t.effect == NO_EXECUTE] if node is not None else []


def condition_taint_diff(node: Node) -> tuple[list[Taint], list[Taint]]:
    """The NoSchedule condition taints to add to and remove from ``node``."""
    wanted = []
    for condition in (node.status.conditions if node.status else None) or ():
        key = _CONDITION_TAINTS.get(condition.type or "", {}).get(condition.status or "")
        if key is not None:
            wanted.append(Taint(key=key, effect=NO_SCHEDULE))
    if node.spec is not None and node.spec.unschedulable:
        wanted.append(Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE))
    present = [t for t in _taints(node) if t.effect == NO_SCHEDULE and t.key in _OWNED_NO_SCHEDULE]
    add = [t for t in wanted if not any(_same(t, p) for p in present)]
    remove = [p for p in present if not any(_same(t, p) for t in wanted)]
    return add, remove


def swap_taints(
    taints: Sequence[Taint], add: Iterable[Taint], remove: Iterable[Taint], now: datetime
) -> list[Taint] | None:
    """``taints`` with ``add`` added (``timeAdded`` = now; replacing one of the same key and
    effect) and ``remove`` removed (by key and effect), or None if that changes nothing."""
    result = list(taints)
    changed = False
    for taint in add:
        stamped = msgspec.structs.replace(taint, time_added=now.replace(microsecond=0))
        index = next((i for i, t in enumerate(result) if _same(t, taint)), None)
        if index is None:
            result.append(stamped)
            changed = True
        elif (result[index].value or "") != (taint.value or ""):
            result[index] = stamped
            changed = True
    kept = [t for t in result if not any(_same(t, r) for r in remove)]
    if len(kept) != len(result):
        changed = True
    return kept if changed else None


def label_updates(node: Node) -> dict[str, str]:
    """The beta ``os``/``arch`` labels to set so they mirror ``kubernetes.io/os``/``arch``."""
    labels = node.metadata.labels or {}
    return {
        beta: labels[ga]
        for ga, beta in _LABEL_MIRRORS
        if ga in labels and labels.get(beta) != labels[ga]
    }


def matching_tolerations(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> tuple[bool, list[Toleration]]:
    """Whether every taint is tolerated, and for each the first toleration that does."""
    used = []
    for taint in taints:
        match = next((t for t in tolerations if tolerates_taint(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_seconds(tolerations: Sequence[Toleration]) -> float:
    """Seconds a pod with these (matching) tolerations may stay: the smallest
    ``tolerationSeconds`` (0 or less: none), 0 without tolerations, and -1 (for ever) when
    none has seconds."""
    if not tolerations:
        return 0.0
    smallest = -1.0
    for toleration in tolerations:
        seconds = toleration.toleration_seconds
        if seconds is None:
            continue
        if seconds <= 0:
            return 0.0
        if smallest < 0 or seconds < smallest:
            smallest = float(seconds)
    return smallest

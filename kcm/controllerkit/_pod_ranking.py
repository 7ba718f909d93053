"""Which pods go first on scale down (``ActivePodsWithRanks``, ``getPodsToDelete``).

kube-controller-manager's deletion order for ReplicaSet-like owners (§2: "Which pods are
deleted first"): unassigned, pending, not ready, cheap (``pod-deletion-cost``),
doubled up on a node, briefly ready, restarting and young pods before the others.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from kcm.models.core_v1 import Pod

from ._pod_predicates import is_pod_active, is_pod_ready, pod_ready_condition

__all__ = [
    "POD_DELETION_COST_ANNOTATION",
    "compare_pods_for_deletion",
    "pod_deletion_cost",
    "pods_to_delete",
    "rank_pods_for_deletion",
]

POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
"""Pods with a lower cost (an int32 annotation, default 0) are deleted first on scale down."""

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def pod_deletion_cost(pod: Pod) -> int:
    """The ``pod-deletion-cost`` annotation as an int32; 0 when absent or invalid."""
    value = (pod.metadata.annotations or {}).get(POD_DELETION_COST_ANNOTATION)
    if value is None:
        return 0
    try:
        cost = int(value.strip())
    except ValueError:
        return 0
    return cost if -(2**31) <= cost < 2**31 else 0


def _ready_time(pod: Pod) -> datetime | None:
    condition = pod_ready_condition(pod)
    if condition is not None and condition.status == "True":
        return condition.last_transition_time
    return None


def _max_restarts(pod: Pod) -> int:
    statuses = pod.status.container_statuses if pod.status else None
    return max((s.restart_count or 0 for s in statuses or ()), default=0)


def _after_or_zero(t1: datetime | None, t2: datetime | None) -> bool:
    """Go's ``afterOrZero``: a missing time first, then the later time first."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _log_rank_diff(t1: datetime, t2: datetime, now: datetime) -> int:
    """Compare ages in log2 buckets of nanoseconds (``logarithmicRankDiff``)."""

    def rank(t: datetime) -> int:
        nanos = (now - t) / timedelta(microseconds=1) * 1000
        return int(math.log2(nanos)) if nanos > 0 else -1

    return rank(t1) - rank(t2)


def _newer_first(
    a: Pod, b: Pod, ta: datetime | None, tb: datetime | None, now: datetime | None
) -> int:
    if now is None or ta is None or tb is None:
        return -1 if _after_or_zero(ta, tb) else 1
    diff = _log_rank_diff(ta, tb, now)
    if diff == 0:
        ua, ub = a.metadata.uid or "", b.metadata.uid or ""
        return -1 if ua < ub else (1 if ua > ub else 0)
    return -1 if diff < 0 else 1


def compare_pods_for_deletion(
    a: Pod, b: Pod, *, rank_a: int = 0, rank_b: int = 0, now: datetime | None = None
) -> int:
    """Negative if ``a`` should be deleted before ``b`` (``ActivePodsWithRanks.Less``).

    Order: unassigned before assigned; Pending < Unknown < Running; not ready before ready;
    lower pod-deletion-cost first; higher rank (more related pods on the same node) first;
    ready for a shorter time first; more container restarts first; newer first. Times are
    compared in log2 buckets of their age at ``now`` (LogarithmicScaleDown), the UID breaking
    ties inside a bucket; without ``now`` they compare exactly.
    """
    node_a = a.spec.node_name if a.spec else None
    node_b = b.spec.node_name if b.spec else None
    if node_a != node_b and (not node_a or not node_b):
        return -1 if not node_a else 1
    phase_a = _PHASE_ORDINAL.get((a.status.phase if a.status else None) or "", 0)
    phase_b = _PHASE_ORDINAL.get((b.status.phase if b.status else None) or "", 0)
    if phase_a != phase_b:
        return -1 if phase_a < phase_b else 1
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return -1 if not ready_a else 1
    cost_a, cost_b = pod_deletion_cost(a), pod_deletion_cost(b)
    if cost_a != cost_b:
        return -1 if cost_a < cost_b else 1
    if rank_a != rank_b:
        return -1 if rank_a > rank_b else 1
    if ready_a and ready_b:
        ta, tb = _ready_time(a), _ready_time(b)
        if ta != tb:
            result = _newer_first(a, b, ta, tb, now)
            if result:
                return result
    restarts_a, restarts_b = _max_restarts(a), _max_restarts(b)
    if restarts_a != restarts_b:
        return -1 if restarts_a > restarts_b else 1
    ca, cb = a.metadata.creation_timestamp, b.metadata.creation_timestamp
    if ca != cb:
        return _newer_first(a, b, ca, cb, now)
    return 0


def rank_pods_for_deletion(
    pods: Sequence[Pod], related_pods: Iterable[Pod] = (), *, now: datetime | None = None
) -> list[Pod]:
    """``pods`` sorted so that the ones to delete first come first.

    Args:
        pods: the candidates (the owner's active pods).
        related_pods: pods of the owner's siblings (ReplicaSets with the same controller);
            a candidate on a node with more related active pods ranks earlier.
        now: the time ages are measured at (log2 buckets); None compares times exactly.
    """
    on_node = Counter(
        (p.spec.node_name if p.spec else None) or "" for p in related_pods if is_pod_active(p)
    )
    ranked = [(p, on_node[(p.spec.node_name if p.spec else None) or ""]) for p in pods]

    def cmp(x: tuple[Pod, int], y: tuple[Pod, int]) -> int:
        return compare_pods_for_deletion(x[0], y[0], rank_a=x[1], rank_b=y[1], now=now)

    ranked.sort(key=functools.cmp_to_key(cmp))
    return [p for p, _ in ranked]


def pods_to_delete(
    pods: Sequence[Pod], related_pods: Iterable[Pod], diff: int, *, now: datetime | None = None
) -> list[Pod]:
    """The ``diff`` pods to delete on scale down (``getPodsToDelete``)."""
    if diff < len(pods):
        return rank_pods_for_deletion(pods, related_pods, now=now)[:diff]
    return list(pods[:diff])

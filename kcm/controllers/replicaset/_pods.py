"""Pure pod helpers: activity, readiness, availability, deletion ranking, pods from templates.

kube-controller-manager's ``controller_utils.go`` and ``podutil`` as the ReplicaSet controller
uses them: the pod predicates and which pods are deleted first (§0, §2).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from kcm.models.core_v1 import Pod, PodCondition, PodTemplateSpec
from kcm.models.meta_v1 import ObjectMeta, OwnerReference

__all__ = [
    "POD_DELETION_COST_ANNOTATION",
    "compare_pods_for_deletion",
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "pod_deletion_cost",
    "pod_from_template",
    "pod_name_prefix",
    "pods_to_delete",
    "rank_pods_for_deletion",
]

POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
"""Pods with a lower cost (an int32 annotation, default 0) are deleted first on scale down."""

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


def is_pod_active(pod: Pod) -> bool:
    """Not Succeeded, not Failed and not being deleted (``controller.IsPodActive``)."""
    phase = pod.status.phase if pod.status else None
    return phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def _ready_condition(pod: Pod) -> PodCondition | None:
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == "Ready":
            return condition
    return None


def is_pod_ready(pod: Pod) -> bool:
    """The pod's ``Ready`` condition is ``True``."""
    condition = _ready_condition(pod)
    return condition is not None and condition.status == "True"


def is_pod_available(pod: Pod, min_ready_seconds: int, now: datetime) -> bool:
    """Ready, and either ``min_ready_seconds`` is 0 or it has been Ready for longer than that
    (the Ready condition's lastTransitionTime + min_ready_seconds is before ``now``)."""
    condition = _ready_condition(pod)
    if condition is None or condition.status != "True":
        return False
    if not min_ready_seconds:
        return True
    since = condition.last_transition_time
    return since is not None and since + timedelta(seconds=min_ready_seconds) < now


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
    condition = _ready_condition(pod)
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


def pod_name_prefix(owner_name: str) -> str:
    """``generateName`` for the owner's pods: ``"<owner>-"``, or the owner's name alone when
    that prefix is not a valid pod name prefix (``getPodsPrefix``)."""
    prefix = f"{owner_name}-"
    masked = prefix[:-1] + "a"  # a trailing dash is fine in a prefix (maskTrailingDash)
    if len(masked) <= 253 and _DNS1123_SUBDOMAIN.match(masked):
        return prefix
    return owner_name


def pod_from_template(
    template: PodTemplateSpec, owner_name: str, controller_ref: OwnerReference | None
) -> Pod:
    """A pod to create for an owner (``GetPodFromTemplate``): ``generateName`` from the owner's
    name, labels, annotations and finalizers from the template's metadata, the template's
    spec, and the controller reference.

    Raises:
        ValueError: the template has no labels (the controller could never find its pods).
    """
    meta = template.metadata or ObjectMeta()
    if not meta.labels:
        raise ValueError("unable to create pods, no labels")
    return Pod(
        metadata=ObjectMeta(
            generate_name=pod_name_prefix(owner_name),
            labels=dict(meta.labels),
            annotations=dict(meta.annotations) if meta.annotations else None,
            finalizers=list(meta.finalizers) if meta.finalizers else None,
            owner_references=[controller_ref] if controller_ref is not None else None,
        ),
        spec=template.spec,
    )

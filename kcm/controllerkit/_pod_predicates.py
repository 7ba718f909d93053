"""Pod predicates: active, ready, available (``controller.IsPodActive`` and ``podutil``).

What every workload controller asks of a pod before counting it (§0: "Pod
predicates"). Pure functions of the pod (and a time for availability).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from kcm.models.core_v1 import Pod, PodCondition

__all__ = ["is_pod_active", "is_pod_available", "is_pod_ready", "pod_ready_condition"]


def is_pod_active(pod: Pod) -> bool:
    """Not Succeeded, not Failed and not being deleted (``controller.IsPodActive``)."""
    phase = pod.status.phase if pod.status else None
    return phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def pod_ready_condition(pod: Pod) -> PodCondition | None:
    """The pod's ``Ready`` condition, whatever its status (``GetPodReadyCondition``)."""
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == "Ready":
            return condition
    return None


def is_pod_ready(pod: Pod) -> bool:
    """The pod's ``Ready`` condition is ``True``."""
    condition = pod_ready_condition(pod)
    return condition is not None and condition.status == "True"


def is_pod_available(pod: Pod, min_ready_seconds: int, now: datetime) -> bool:
    """Ready, and either ``min_ready_seconds`` is 0 or it has been Ready for longer than that
    (the Ready condition's lastTransitionTime + min_ready_seconds is before ``now``)."""
    condition = pod_ready_condition(pod)
    if condition is None or condition.status != "True":
        return False
    if not min_ready_seconds:
        return True
    since = condition.last_transition_time
    return since is not None and since + timedelta(seconds=min_ready_seconds) < now

"""What a StatefulSet asks for, with kube-apiserver's defaults where a field is unset, and the
pod states the controller waits on (Go's ``stateful_set_utils.go`` predicates).

The API server defaults ``replicas`` (1), ``podManagementPolicy`` (OrderedReady),
``updateStrategy`` (RollingUpdate, partition 0) and ``revisionHistoryLimit`` (10); the
controller reads them through these functions so that it behaves the same on a server that
leaves them unset.
"""

from __future__ import annotations

from datetime import datetime

from kcm.controllerkit import is_pod_available, is_pod_ready
from kcm.models.apps_v1 import StatefulSet
from kcm.models.core_v1 import Pod

__all__ = [
    "ON_DELETE",
    "PARALLEL",
    "ROLLING_UPDATE",
    "allows_burst",
    "is_created",
    "is_failed",
    "is_healthy",
    "is_running_and_available",
    "is_running_and_ready",
    "is_terminating",
    "min_ready_seconds",
    "partition",
    "replicas",
    "revision_history_limit",
    "update_strategy",
]

ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"
PARALLEL = "Parallel"


def replicas(sts: StatefulSet) -> int:
    """``spec.replicas`` (default 1)."""
    value = sts.spec.replicas if sts.spec else None
    return 1 if value is None else value


def update_strategy(sts: StatefulSet) -> str:
    """``spec.updateStrategy.type`` (default RollingUpdate)."""
    strategy = sts.spec.update_strategy if sts.spec else None
    return (strategy.type if strategy else None) or ROLLING_UPDATE


def partition(sts: StatefulSet) -> int:
    """The ordinal from which a rolling update replaces pods: ``rollingUpdate.partition``
    (default 0); 0 for OnDelete."""
    strategy = sts.spec.update_strategy if sts.spec else None
    rolling = strategy.rolling_update if strategy else None
    if update_strategy(sts) != ROLLING_UPDATE or rolling is None:
        return 0
    return rolling.partition or 0


def allows_burst(sts: StatefulSet) -> bool:
    """``podManagementPolicy: Parallel``: pods are created and deleted without waiting on each
    other (``allowsBurst``); OrderedReady (the default) is *monotonic*."""
    return (sts.spec.pod_management_policy if sts.spec else None) == PARALLEL


def revision_history_limit(sts: StatefulSet) -> int:
    """``spec.revisionHistoryLimit`` (default 10)."""
    value = sts.spec.revision_history_limit if sts.spec else None
    return 10 if value is None else value


def min_ready_seconds(sts: StatefulSet) -> int:
    """``spec.minReadySeconds`` (0 when unset)."""
    return (sts.spec.min_ready_seconds if sts.spec else None) or 0


def is_created(pod: Pod) -> bool:
    """The API server has the pod (it has a phase; a pod built locally has none)."""
    return bool(pod.status and pod.status.phase)


def is_failed(pod: Pod) -> bool:
    return bool(pod.status and pod.status.phase == "Failed")


def is_terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None


def is_running_and_ready(pod: Pod) -> bool:
    return bool(pod.status and pod.status.phase == "Running") and is_pod_ready(pod)


def is_running_and_available(pod: Pod, min_ready: int, now: datetime) -> bool:
    """Ready for longer than ``min_ready`` seconds (``isRunningAndAvailable``: despite its
    name, Go does not look at the phase here)."""
    return is_pod_available(pod, min_ready, now)


def is_healthy(pod: Pod) -> bool:
    """Running, Ready and not being deleted."""
    return is_running_and_ready(pod) and not is_terminating(pod)

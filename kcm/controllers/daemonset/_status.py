"""A DaemonSet's status counts from its nodes and pods (``updateDaemonSetStatus``,
``storeDaemonSetStatus``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import msgspec

from kcm.controllerkit import is_pod_available, is_pod_ready
from kcm.models.apps_v1 import DaemonSet, DaemonSetStatus
from kcm.models.core_v1 import Node, Pod

from ._placement import node_should_run_daemon_pod
from ._pods import is_pod_updated, sort_daemon_pods

__all__ = ["calculate_status", "status_unchanged"]

_COUNTS = (
    "desired_number_scheduled",
    "current_number_scheduled",
    "number_misscheduled",
    "number_ready",
    "updated_number_scheduled",
    "number_available",
    "number_unavailable",
)


def calculate_status(
    ds: DaemonSet,
    nodes: Sequence[Node],
    node_to_pods: Mapping[str, Sequence[Pod]],
    hash: str,
    generation: int | None,
    now: datetime,
) -> DaemonSetStatus:
    """The counts (the rest of the status is the DaemonSet's).

    For each node that should run a pod: ``desiredNumberScheduled``; with a pod there (the
    oldest, bound ones first, is looked at): ``currentNumberScheduled``, ``numberReady``,
    ``numberAvailable`` (Ready for ``minReadySeconds`` at ``now``) and
    ``updatedNumberScheduled`` (current hash or template generation). For each node that
    should not but has a pod: ``numberMisscheduled``. ``numberUnavailable`` is desired minus
    available.
    """
    min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
    desired = current = misscheduled = ready = updated = available = 0
    for node in nodes:
        pods = node_to_pods.get(node.metadata.name or "") or ()
        if not node_should_run_daemon_pod(node, ds).should_run:
            misscheduled += bool(pods)
            continue
        desired += 1
        if not pods:
            continue
        current += 1
        pod = sort_daemon_pods(pods)[0]
        if is_pod_ready(pod):
            ready += 1
            available += is_pod_available(pod, min_ready, now)
        updated += is_pod_updated(pod, hash, generation)
    base = ds.status or DaemonSetStatus()
    return msgspec.structs.replace(
        base,
        desired_number_scheduled=desired,
        current_number_scheduled=current,
        number_misscheduled=misscheduled,
        number_ready=ready,
        updated_number_scheduled=updated,
        number_available=available,
        number_unavailable=desired - available,
    )


def status_unchanged(ds: DaemonSet, counts: DaemonSetStatus) -> bool:
    """Whether ``ds`` already reports ``counts`` and has observed its generation (then no write
    is needed)."""
    status = ds.status or DaemonSetStatus()
    same = all((getattr(status, f) or 0) == (getattr(counts, f) or 0) for f in _COUNTS)
    return same and (status.observed_generation or 0) >= (ds.metadata.generation or 0)

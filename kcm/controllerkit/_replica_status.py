"""The status of a ReplicaSet-like owner from its claimed pods (``calculateStatus``), and
whether writing it would change anything (``updateReplicaSetStatus``'s check)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from kcm.models.core_v1 import Pod
from kcm.selectors import LabelSelector

from ._pod_predicates import is_pod_available, is_pod_ready

__all__ = [
    "REPLICA_FAILURE",
    "calculate_replica_status",
    "desired_replicas",
    "replica_status_unchanged",
]

REPLICA_FAILURE = "ReplicaFailure"
"""The condition type set when creating or deleting pods failed."""


def calculate_replica_status(
    owner: Any,
    pods: Sequence[Pod],
    manage_error: BaseException | None,
    *,
    now: datetime,
    status_type: type[Any],
    condition_type: type[Any],
) -> Any:
    """The owner's new status (observedGeneration is left as it was).

    Args:
        owner: a ReplicaSet or ReplicationController (``spec`` and ``status`` of that shape).
        pods: the active pods the owner claimed.
        manage_error: what creating/deleting pods raised in this sync, if anything.
        now: the time availability (minReadySeconds) is judged at, and the condition's
            lastTransitionTime.
        status_type: the owner's status model; condition_type: its condition model.

    Returns:
        A new status object: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
        and the ``ReplicaFailure`` condition added (reason ``FailedCreate`` with too few pods,
        ``FailedDelete`` with too many) when ``manage_error`` is set and none exists, removed
        when there was no error. Other fields and conditions are kept.
    """
    spec = owner.spec
    template_labels = (
        spec.template.metadata.labels if spec.template and spec.template.metadata else None
    ) or {}
    template_selector = LabelSelector.from_labels(template_labels)
    min_ready = spec.min_ready_seconds or 0
    fully_labeled = ready = available = 0
    for pod in pods:
        if template_selector.matches(pod.metadata.labels):
            fully_labeled += 1
        if is_pod_ready(pod):
            ready += 1
            if is_pod_available(pod, min_ready, now):
                available += 1
    old = owner.status if owner.status is not None else status_type()
    conditions = list(old.conditions or ())
    failure = next((c for c in conditions if c.type == REPLICA_FAILURE), None)
    if manage_error is not None and failure is None:
        diff = len(pods) - desired_replicas(owner)
        reason = "FailedCreate" if diff < 0 else ("FailedDelete" if diff > 0 else "")
        conditions.append(
            condition_type(
                type=REPLICA_FAILURE,
                status="True",
                reason=reason,
                message=str(manage_error),
                last_transition_time=now.replace(microsecond=0),
            )
        )
    elif manage_error is None and failure is not None:
        conditions = [c for c in conditions if c.type != REPLICA_FAILURE]
    return msgspec.structs.replace(
        old,
        replicas=len(pods),
        fully_labeled_replicas=fully_labeled,
        ready_replicas=ready,
        available_replicas=available,
        conditions=conditions or None,
    )


def desired_replicas(owner: Any) -> int:
    """``spec.replicas``, 1 when unset (the API default)."""
    replicas = owner.spec.replicas
    return 1 if replicas is None else int(replicas)


def replica_status_unchanged(owner: Any, new_status: Any) -> bool:
    """Whether writing ``new_status`` would change nothing (``updateReplicaSetStatus``'s check:
    the four counts, the conditions, and observedGeneration == generation)."""
    old = owner.status
    if old is None:
        return False
    return (
        (old.replicas or 0) == new_status.replicas
        and (old.fully_labeled_replicas or 0) == new_status.fully_labeled_replicas
        and (old.ready_replicas or 0) == new_status.ready_replicas
        and (old.available_replicas or 0) == new_status.available_replicas
        and owner.metadata.generation == old.observed_generation
        and (old.conditions or None) == (new_status.conditions or None)
    )

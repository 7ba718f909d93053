"""One pass over a StatefulSet's pods: create, recreate, scale down and roll (Go's
``updateStatefulSet``).

The pods are laid out by ordinal: ``replicas[0..n)`` (a missing one is built from the current
revision below the rolling update's partition, from the update revision otherwise) and the
*condemned* pods at ordinals ≥ n. With OrderedReady (*monotonic*) management the pass stops at
the first pod it creates, deletes or has to wait for (one not Running and Ready, not yet
available for ``minReadySeconds``, or terminating), so pods come up in ordinal order and go
away in reverse, one at a time. With Parallel management it creates, recreates and deletes
everything it can in one pass. Then, for RollingUpdate, the highest-ordinal pod at or above
the partition that is not at the update revision is deleted (it is recreated at the update
revision by a later pass), once every pod above it is healthy; OnDelete stops before that.

The pass only decides; the writes go through :class:`PodActions`, so it is tested without an
API server.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from kcm.models.apps_v1 import StatefulSet
from kcm.models.core_v1 import Pod
from kcm.models.meta_v1 import OwnerReference

from ._identity import (
    identity_matches,
    new_stateful_pod,
    ordinal_of,
    pod_revision,
    storage_matches,
    with_revision,
)
from ._spec import (
    ON_DELETE,
    allows_burst,
    is_created,
    is_failed,
    is_healthy,
    is_running_and_available,
    is_running_and_ready,
    is_terminating,
    min_ready_seconds,
    partition,
    replicas,
    update_strategy,
)
from ._status import SetStatus

__all__ = ["PodActions", "Revisions", "new_versioned_pod", "update_replicas"]


class PodActions(Protocol):
    """The writes a pass makes (``StatefulPodControl``); each raises when it fails, which
    ends the pass (the sync is retried)."""

    async def create_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """Create the pod's claims (if missing), then the pod."""

    async def delete_pod(self, sts: StatefulSet, pod: Pod) -> None: ...

    async def update_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """Restore the pod's identity and storage (``sts`` is the set at the update
        revision)."""

    def recreating_failed_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """Record that a Failed pod is deleted to be recreated (a Warning event)."""


@dataclass(frozen=True)
class Revisions:
    """The current and update revisions (by name) and the set as each describes it."""

    current: str
    update: str
    current_set: StatefulSet
    update_set: StatefulSet
    controller_ref: OwnerReference

    def new_pod(self, ordinal: int) -> Pod:
        """The pod for an empty ordinal (:func:`new_versioned_pod`)."""
        return new_versioned_pod(self, ordinal)


def new_versioned_pod(revisions: Revisions, ordinal: int) -> Pod:
    """The pod of ``ordinal``: built from the current revision when a rolling update's
    partition is above it, else from the update revision, and labelled with that revision
    (``newVersionedStatefulSetPod``)."""
    current_set = revisions.current_set
    if ordinal < partition(current_set):
        pod = new_stateful_pod(current_set, ordinal, revisions.controller_ref)
        return with_revision(pod, revisions.current)
    pod = new_stateful_pod(revisions.update_set, ordinal, revisions.controller_ref)
    return with_revision(pod, revisions.update)


async def update_replicas(
    sts: StatefulSet,
    revisions: Revisions,
    collision_count: int,
    pods: list[Pod],
    actions: PodActions,
    *,
    now: datetime,
) -> SetStatus:
    """Run one pass over ``sts``'s claimed ``pods`` (see the module docstring).

    Returns:
        The status as the pass leaves it (to be written).

    Raises:
        Exception: whatever an action raised; the pass stopped there and its status is not
            to be written (Go does not write it either).
    """
    status = SetStatus(
        observed_generation=sts.metadata.generation or 0,
        current_revision=revisions.current,
        update_revision=revisions.update,
        collision_count=collision_count,
    )
    count = replicas(sts)
    min_ready = min_ready_seconds(sts)
    slots: list[Pod | None] = [None] * count
    condemned: list[Pod] = []
    for pod in pods:
        status.replicas += 1
        if is_running_and_ready(pod):
            status.ready_replicas += 1
            if is_running_and_available(pod, min_ready, now):
                status.available_replicas += 1
        if is_created(pod) and not is_terminating(pod):
            _count_revision(status, revisions, pod, 1)
        ordinal = ordinal_of(pod)
        if 0 <= ordinal < count:
            slots[ordinal] = pod
        elif ordinal >= count:
            condemned.append(pod)
    wanted = [pod if pod is not None else revisions.new_pod(i) for i, pod in enumerate(slots)]
    condemned.sort(key=ordinal_of)
    first_unhealthy = next((p for p in [*wanted, *condemned] if not is_healthy(p)), None)

    if sts.metadata.deletion_timestamp is not None:
        return status
    monotonic = not allows_burst(sts)

    for i, pod in enumerate(wanted):
        if is_failed(pod):
            actions.recreating_failed_pod(sts, pod)
            await actions.delete_pod(sts, pod)
            _count_revision(status, revisions, pod, -1)
            status.replicas -= 1
            pod = wanted[i] = revisions.new_pod(i)
        if not is_created(pod):
            await actions.create_pod(sts, pod)
            status.replicas += 1
            _count_revision(status, revisions, pod, 1)
            if monotonic:
                return status
            continue
        if monotonic and (
            is_terminating(pod)
            or not is_running_and_ready(pod)
            or not is_running_and_available(pod, min_ready, now)
        ):
            return status  # wait for it: it is terminating, not ready or not yet available
        if identity_matches(sts, pod) and storage_matches(sts, pod):
            continue
        await actions.update_pod(revisions.update_set, pod)

    for pod in reversed(condemned):
        if is_terminating(pod):
            if monotonic:
                return status  # wait until it is gone
            continue
        if (
            monotonic
            and pod is not first_unhealthy
            and (not is_running_and_ready(pod) or not is_running_and_available(pod, min_ready, now))
        ):
            return status  # wait for the first unhealthy pod to become healthy
        await actions.delete_pod(sts, pod)
        _count_revision(status, revisions, pod, -1)
        if monotonic:
            return status

    if update_strategy(sts) == ON_DELETE:
        return status
    for pod in reversed(wanted[partition(sts) :]):
        if pod_revision(pod) != revisions.update and not is_terminating(pod):
            status.current_replicas -= 1
            await actions.delete_pod(sts, pod)
            return status
        if not is_healthy(pod):
            return status  # wait for the pod to come back updated and healthy
    return status


def _count_revision(status: SetStatus, revisions: Revisions, pod: Pod, delta: int) -> None:
    revision = pod_revision(pod)
    if revision == revisions.current:
        status.current_replicas += delta
    if revision == revisions.update:
        status.updated_replicas += delta

"""Informer events of the DaemonSet controller: which DaemonSets to sync, and the expectations
they count down (``addDaemonset`` ... ``updateNode``). Synchronous and cheap: they run on the
informers' notification path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, final

import msgspec

from kcm.controllerkit import is_pod_ready
from kcm.models import ObjectKey, object_key
from kcm.models.apps_v1 import ControllerRevision, DaemonSet
from kcm.models.core_v1 import Node, NodeStatus, Pod
from kcm.runtime import get_controller_of

from ._placement import node_should_run_daemon_pod

if TYPE_CHECKING:
    from ._controller import DaemonSetController

__all__ = [
    "DaemonSetEvents",
    "NodeEvents",
    "PodEvents",
    "RevisionEvents",
    "should_ignore_node_update",
]


@final
class DaemonSetEvents:
    """Every DaemonSet event enqueues it; a deletion (or a re-creation under the same name)
    forgets its expectations, so a new DaemonSet of that name starts clean."""

    def __init__(self, controller: DaemonSetController) -> None:
        self._c = controller

    def create_keys(self, obj: DaemonSet, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: DaemonSet, new: DaemonSet) -> Iterable[ObjectKey]:
        if old.metadata.uid != new.metadata.uid:
            self._c.expectations.delete_expectations(object_key(old))
        return (object_key(new),)

    def delete_keys(self, obj: DaemonSet, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        key = object_key(obj)
        self._c.expectations.delete_expectations(key)
        return (key,)


@final
class RevisionEvents:
    """ControllerRevision events: an owned revision's update or deletion enqueues its
    DaemonSet (its creation does not: the DaemonSet made it); an orphan's creation, or a
    change of its labels or owner, enqueues every DaemonSet that selects it (to adopt it)."""

    def __init__(self, controller: DaemonSetController) -> None:
        self._c = controller

    def _owner(self, revision: ControllerRevision) -> list[ObjectKey]:
        ref = get_controller_of(revision)
        if ref is None:
            return []
        ds = self._c.resolve_controller_ref(revision.metadata.namespace or "", ref)
        return [object_key(ds)] if ds is not None else []

    def create_keys(
        self, obj: ControllerRevision, *, is_in_initial_list: bool
    ) -> Iterable[ObjectKey]:
        if obj.metadata.deletion_timestamp is not None:
            return self.delete_keys(obj, final_state_unknown=False)
        if get_controller_of(obj) is not None:
            return ()
        return self._c.daemon_sets_selecting(obj.metadata.namespace or "", obj.metadata.labels)

    def update_keys(self, old: ControllerRevision, new: ControllerRevision) -> Iterable[ObjectKey]:
        if old.metadata.resource_version == new.metadata.resource_version:
            return ()
        keys: dict[ObjectKey, None] = {}
        old_ref, new_ref = get_controller_of(old), get_controller_of(new)
        if old_ref != new_ref and old_ref is not None:
            keys.update(dict.fromkeys(self._owner(old)))
        if new_ref is not None:
            keys.update(dict.fromkeys(self._owner(new)))
            return keys
        if old.metadata.labels != new.metadata.labels or old_ref != new_ref:
            namespace = new.metadata.namespace or ""
            keys.update(
                dict.fromkeys(self._c.daemon_sets_selecting(namespace, new.metadata.labels))
            )
        return keys

    def delete_keys(
        self, obj: ControllerRevision, *, final_state_unknown: bool
    ) -> Iterable[ObjectKey]:
        return self._owner(obj)


@final
class PodEvents:
    """Pod events: an owned pod's creation observes a create, its deletion (or a
    deletionTimestamp) a delete, and enqueue its DaemonSet; a pod turning Ready re-syncs after
    ``minReadySeconds`` + 1 s; an orphan's creation or label change enqueues every DaemonSet
    that selects it."""

    def __init__(self, controller: DaemonSetController) -> None:
        self._c = controller

    def _owner_key(self, pod: Pod) -> tuple[ObjectKey, DaemonSet] | None:
        ref = get_controller_of(pod)
        if ref is None:
            return None
        ds = self._c.resolve_controller_ref(pod.metadata.namespace or "", ref)
        return (object_key(ds), ds) if ds is not None else None

    def _selecting(self, pod: Pod) -> list[ObjectKey]:
        return self._c.daemon_sets_selecting(pod.metadata.namespace or "", pod.metadata.labels)

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        if obj.metadata.deletion_timestamp is not None:
            # Seen for the first time already deleting (a restart): not a creation.
            return self.delete_keys(obj, final_state_unknown=False)
        if get_controller_of(obj) is None:
            return self._selecting(obj)
        owner = self._owner_key(obj)
        if owner is None:
            return ()
        self._c.expectations.creation_observed(owner[0])
        return (owner[0],)

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        if old.metadata.resource_version == new.metadata.resource_version:
            return ()
        if new.metadata.deletion_timestamp is not None:
            # A graceful deletion began: count it now, the pod may stay for its grace period.
            return self.delete_keys(new, final_state_unknown=False)
        keys: dict[ObjectKey, None] = {}
        old_ref, new_ref = get_controller_of(old), get_controller_of(new)
        if old_ref != new_ref and old_ref is not None:
            previous = self._owner_key(old)
            if previous is not None:
                keys[previous[0]] = None
        if new_ref is not None:
            owner = self._owner_key(new)
            if owner is None:
                return keys
            key, ds = owner
            keys[key] = None
            min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(new):
                # A second more, so that "available" is certain when it is looked at again.
                self._c.controller.queue.add_after(key, float(min_ready) + 1.0)
            return keys
        if old.metadata.labels != new.metadata.labels or old_ref != new_ref:
            keys.update(dict.fromkeys(self._selecting(new)))
        return keys

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        owner = self._owner_key(obj)
        if owner is None:
            return ()
        self._c.expectations.deletion_observed(owner[0], object_key(obj))
        return (owner[0],)


def _true_conditions(node: Node) -> frozenset[str]:
    conditions = (node.status.conditions if node.status else None) or ()
    return frozenset(c.type or "" for c in conditions if c.status == "True")


def should_ignore_node_update(old: Node, new: Node) -> bool:
    """Whether a node update cannot change any placement: the same condition types are True and
    nothing else changed but the conditions' details (heartbeats), the resourceVersion and
    managed fields (``shouldIgnoreNodeUpdate``; Go also compares managed fields)."""
    if _true_conditions(old) != _true_conditions(new):
        return False
    old_status, new_status = old.status or NodeStatus(), new.status or NodeStatus()
    metadata = msgspec.structs.replace(
        old.metadata,
        resource_version=new.metadata.resource_version,
        managed_fields=new.metadata.managed_fields,
    )
    status = msgspec.structs.replace(old_status, conditions=new_status.conditions)
    before = msgspec.structs.replace(old, metadata=metadata, status=status)
    return before == msgspec.structs.replace(new, status=new_status)


@final
class NodeEvents:
    """Node events: a new node enqueues the DaemonSets that should run on it; an update that
    changes a DaemonSet's placement answer enqueues that DaemonSet (heartbeats are ignored).
    Deleting a node enqueues nothing (as in Kubernetes: its bound pods go to podgc, and the
    DaemonSet notices at its next sync)."""

    def __init__(self, controller: DaemonSetController) -> None:
        self._c = controller

    def create_keys(self, obj: Node, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return [
            object_key(ds)
            for ds in self._c.daemon_sets()
            if node_should_run_daemon_pod(obj, ds).should_run
        ]

    def update_keys(self, old: Node, new: Node) -> Iterable[ObjectKey]:
        if should_ignore_node_update(old, new):
            return ()
        return [
            object_key(ds)
            for ds in self._c.daemon_sets()
            if node_should_run_daemon_pod(old, ds) != node_should_run_daemon_pod(new, ds)
        ]

    def delete_keys(self, obj: Node, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()

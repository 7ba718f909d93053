"""Informer events of a :class:`~kcm.controllerkit.ReplicaManager`: owner and pod events become
owner keys, and pod events count down the manager's expectations (``addPod``/``updatePod``/
``deletePod``). Synchronous and cheap: they run on the informers' notification path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, final

from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import Pod
from kcm.runtime import HasMetadata, get_controller_of

from ._pod_predicates import is_pod_ready

if TYPE_CHECKING:
    from ._replica_manager import ReplicaManager

__all__ = ["OwnerEvents", "PodEvents"]

W = TypeVar("W", bound=HasMetadata)


@final
class OwnerEvents(Generic[W]):
    """Owner informer events: enqueue; a deleted (or re-created) owner forgets expectations."""

    def __init__(self, manager: ReplicaManager[W]) -> None:
        self._m = manager

    def create_keys(self, obj: W, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: W, new: W) -> Iterable[ObjectKey]:
        if old.metadata.uid != new.metadata.uid:
            self._m.expectations.delete_expectations(object_key(old))  # deleted and re-created
        return (object_key(new),)

    def delete_keys(self, obj: W, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        key = object_key(obj)
        self._m.expectations.delete_expectations(key)
        return (key,)


@final
class PodEvents(Generic[W]):
    """Pod informer events: observe expectations and enqueue the owners concerned
    (``addPod``/``updatePod``/``deletePod``)."""

    def __init__(self, manager: ReplicaManager[W]) -> None:
        self._m = manager

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        if obj.metadata.deletion_timestamp is not None:
            # Seen for the first time already deleting (e.g. after a restart): not a create.
            return self.delete_keys(obj, final_state_unknown=False)
        ref = get_controller_of(obj)
        if ref is not None:
            owner = self._m.resolve_controller_ref(obj.metadata.namespace or "", ref)
            if owner is None:
                return ()
            key = object_key(owner)
            self._m.expectations.creation_observed(key)
            return (key,)
        return self._m.owners_selecting(obj)  # an orphan: who wants to adopt it?

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        if old.metadata.resource_version == new.metadata.resource_version:
            return ()  # a resync
        labels_changed = old.metadata.labels != new.metadata.labels
        keys: dict[ObjectKey, None] = {}
        if new.metadata.deletion_timestamp is not None:
            # Graceful deletion starts: count it now, the final delete may come much later.
            keys.update(dict.fromkeys(self.delete_keys(new, final_state_unknown=False)))
            if labels_changed:
                keys.update(dict.fromkeys(self.delete_keys(old, final_state_unknown=False)))
            return keys
        namespace = new.metadata.namespace or ""
        new_ref, old_ref = get_controller_of(new), get_controller_of(old)
        ref_changed = new_ref != old_ref
        if ref_changed and old_ref is not None:
            old_owner = self._m.resolve_controller_ref(namespace, old_ref)
            if old_owner is not None:
                keys[object_key(old_owner)] = None
        if new_ref is not None:
            owner = self._m.resolve_controller_ref(namespace, new_ref)
            if owner is None:
                return keys
            key = object_key(owner)
            keys[key] = None
            spec: Any = getattr(owner, "spec", None)
            min_ready = (spec.min_ready_seconds if spec else 0) or 0
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(new):
                # Re-check availability once minReadySeconds have passed.
                self._m.controller.queue.add_after(key, float(min_ready) + 1.0)
            return keys
        if labels_changed or ref_changed:
            keys.update(dict.fromkeys(self._m.owners_selecting(new)))
        return keys

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        ref = get_controller_of(obj)
        if ref is None:
            return ()
        owner = self._m.resolve_controller_ref(obj.metadata.namespace or "", ref)
        if owner is None:
            return ()
        key = object_key(owner)
        self._m.expectations.deletion_observed(key, object_key(obj))
        return (key,)

"""Pod events become StatefulSet keys (Go's ``addPod``/``updatePod``/``deletePod``).

A pod with a controller reference concerns that StatefulSet (if it still exists with that
UID); an orphan concerns every StatefulSet in its namespace whose (non-empty) selector matches
it, which may adopt it. There are no expectations: the next sync reads the cache as it is.
Synchronous and cheap: these run on the informer's notification path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import final

from kcm.controllerkit import is_pod_ready
from kcm.informers import Lister
from kcm.models import ObjectKey, object_key
from kcm.models.apps_v1 import StatefulSet
from kcm.models.core_v1 import Pod
from kcm.models.meta_v1 import OwnerReference
from kcm.runtime import get_controller_of
from kcm.selectors import LabelSelector, SelectorParseError

from ._spec import min_ready_seconds

__all__ = ["PodEvents"]

logger = logging.getLogger(__name__)


@final
class PodEvents:
    """The StatefulSet keys a pod event concerns.

    Args:
        sets: the StatefulSet lister.
        add_after: queues a key after a delay (seconds): a pod turning Ready rechecks its set
            once ``minReadySeconds`` + 1 s have passed, when it may be available.
    """

    def __init__(
        self, sets: Lister[StatefulSet], add_after: Callable[[ObjectKey, float], None]
    ) -> None:
        self._sets = sets
        self._add_after = add_after

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        if obj.metadata.deletion_timestamp is not None:
            return self.delete_keys(obj, final_state_unknown=False)
        ref = get_controller_of(obj)
        if ref is not None:
            sts = self._resolve(obj.metadata.namespace or "", ref)
            return (object_key(sts),) if sts is not None else ()
        return self._selecting(obj)

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        if old.metadata.resource_version == new.metadata.resource_version:
            return ()  # a resync
        namespace = new.metadata.namespace or ""
        new_ref, old_ref = get_controller_of(new), get_controller_of(old)
        ref_changed = new_ref != old_ref
        keys: dict[ObjectKey, None] = {}
        if ref_changed and old_ref is not None:
            previous = self._resolve(namespace, old_ref)
            if previous is not None:
                keys[object_key(previous)] = None
        if new_ref is not None:
            sts = self._resolve(namespace, new_ref)
            if sts is None:
                return keys
            key = object_key(sts)
            keys[key] = None
            min_ready = min_ready_seconds(sts)
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(new):
                # The +1 s keeps the check from landing just before the pod is available.
                self._add_after(key, float(min_ready) + 1.0)
            return keys
        if ref_changed or old.metadata.labels != new.metadata.labels:
            keys.update(dict.fromkeys(self._selecting(new)))
        return keys

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        ref = get_controller_of(obj)
        if ref is None:
            return ()  # nobody cares about an orphan going away
        sts = self._resolve(obj.metadata.namespace or "", ref)
        return (object_key(sts),) if sts is not None else ()

    def _resolve(self, namespace: str, ref: OwnerReference) -> StatefulSet | None:
        """The StatefulSet ``ref`` names, if it still exists with that UID."""
        if ref.kind != "StatefulSet" or not ref.name:
            return None
        sts = self._sets.get_or_none(namespace, ref.name)
        if sts is None or sts.metadata.uid != ref.uid:
            return None
        return sts

    def _selecting(self, pod: Pod) -> list[ObjectKey]:
        """Keys of the StatefulSets whose non-empty selector matches the pod
        (``GetPodStatefulSets``)."""
        keys = []
        for sts in self._sets.namespace(pod.metadata.namespace or "").list():
            try:
                selector = LabelSelector.from_model(sts.spec.selector if sts.spec else None)
            except SelectorParseError:
                continue
            if not selector.empty and selector.matches(pod.metadata.labels):
                keys.append(object_key(sts))
        if len(keys) > 1:
            logger.warning(
                "user error: more than one StatefulSet is selecting pods with labels %s: %s",
                pod.metadata.labels,
                [k.name for k in keys],
            )
        return keys

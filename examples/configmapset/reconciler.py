"""The ConfigMapSet reconciler, written only on kcm's public API.

For a set ``<ns>/<name>`` it keeps a ConfigMap ``<name>`` with ``spec.data`` in every namespace
the selector matches, and reports ``status.namespaceCount``, ``observedGeneration`` and a
``Ready`` condition.

Ownership (why a finalizer): Kubernetes only allows an ownerReference to an owner in the
**same** namespace; the garbage collector treats a cross-namespace reference as pointing at a
missing owner (and reports ``OwnerRefInvalidNamespace``). So only the ConfigMap in the set's
own namespace gets a controller reference (garbage collection deletes it with the set); the
others carry two labels naming the set, and the set carries a finalizer: on deletion the
reconciler deletes every labelled ConfigMap, then removes the finalizer so the set can go.

Caches lag behind writes. Two decisions therefore read the API instead of the cache: the
finalizer lists the set's ConfigMaps live (a ConfigMap stamped just before the deletion may not
be cached yet, and removing the finalizer without deleting it would leak it for good), and a
create that fails with AlreadyExists reads the existing ConfigMap before calling it a name
conflict (it may be ours, created by an earlier reconcile the cache has not seen yet).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import msgspec

from kcm.client import ApiClient
from kcm.clock import Clock
from kcm.errors import AlreadyExists, NotFound
from kcm.models import Condition, ConfigMap, Namespace, ObjectKey, ObjectMeta, to_dict
from kcm.record import EventRecorder
from kcm.runtime import (
    Manager,
    Request,
    Result,
    add_finalizer,
    enqueue_mapped,
    get_controller_of,
    has_finalizer,
    labels_changed,
    remove_finalizer,
    set_controller_reference,
    spec_or_deletion_changed,
)
from kcm.selectors import LabelSelector

from .api import API_VERSION, FINALIZER, KIND, NAME_LABEL, NAMESPACE_LABEL, ConfigMapSet

__all__ = ["NAME", "ConfigMapSetReconciler", "add_to_manager"]

NAME = "configmapset"
logger = logging.getLogger(__name__)


class ConfigMapSetReconciler:
    """Stamps ConfigMaps for ConfigMapSets (see the module docstring).

    Args:
        client: writes go through it; reads come from the factory's caches.
        manager: provides the shared informer factory, the clock and the event recorder.
    """

    def __init__(
        self, client: ApiClient, manager: Manager, recorder: EventRecorder, clock: Clock
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.clock = clock
        factory = manager.factory
        self.sets = factory.lister_for(ConfigMapSet)
        self.namespaces = factory.lister_for(Namespace)
        # Only ConfigMaps carrying our label are cached: the same informer the builder watches.
        self.stamped = factory.lister_for(ConfigMap, label_selector=NAME_LABEL)

    async def reconcile(self, request: Request) -> Result:
        cms = self.sets.get_or_none(request.namespace, request.name)
        if cms is None:
            return Result()  # gone: the finalizer already cleaned up
        api = self.client.api(ConfigMapSet, request.namespace)
        if cms.metadata.deletion_timestamp is not None:
            if has_finalizer(cms, FINALIZER):
                removed = await self._delete_all(cms)
                try:
                    await remove_finalizer(api, cms, FINALIZER)
                except NotFound:
                    return Result()  # a stale cache: an earlier reconcile already finished
                self.recorder.event(
                    cms, "Normal", "CleanedUp", f"Deleted {removed} stamped ConfigMap(s)"
                )
            return Result()
        cms = await add_finalizer(api, cms, FINALIZER)

        targets = self._target_namespaces(cms)
        stamped = 0
        for namespace in targets:
            stamped += await self._stamp(cms, namespace)
        await self._delete_stale(cms, keep=targets)
        await self._write_status(cms, stamped, len(targets))
        return Result()

    # -- desired state -------------------------------------------------------------------

    def _target_namespaces(self, cms: ConfigMapSet) -> list[str]:
        raw = cms.spec.namespace_selector
        selector = LabelSelector.from_model(raw) if raw is not None else LabelSelector()
        return sorted(
            ns.metadata.name or ""
            for ns in self.namespaces.list()
            if selector.matches(ns.metadata.labels or {})
            and (ns.status is None or ns.status.phase != "Terminating")
        )

    def _desired(self, cms: ConfigMapSet, namespace: str) -> ConfigMap:
        meta = cms.metadata
        desired = ConfigMap(
            metadata=ObjectMeta(
                name=meta.name,
                namespace=namespace,
                labels={NAME_LABEL: meta.name or "", NAMESPACE_LABEL: meta.namespace or ""},
            ),
            data=dict(cms.spec.data),
        )
        if namespace == meta.namespace:  # owner references cannot cross namespaces
            desired = set_controller_reference(cms, desired, API_VERSION, KIND)
        return desired

    # -- writes --------------------------------------------------------------------------

    async def _stamp(self, cms: ConfigMapSet, namespace: str) -> int:
        """Create or fix the ConfigMap in ``namespace``; 1 if it is in sync afterwards."""
        desired = self._desired(cms, namespace)
        api = self.client.api(ConfigMap, namespace)
        current = self.stamped.get_or_none(namespace, desired.metadata.name or "")
        if current is None:
            try:
                await api.create(desired)
            except AlreadyExists:
                # Not in our (labelled) cache: either someone else's ConfigMap has that name,
                # or ours was created by an earlier reconcile the cache has not caught up with.
                # Only the live object tells (a NotFound here is retried with backoff).
                current = await api.get(desired.metadata.name or "")
                if not _owned_by(current, cms):
                    self.recorder.event(
                        cms,
                        "Warning",
                        "NameConflict",
                        f"ConfigMap {namespace}/{desired.metadata.name} exists and is not ours",
                    )
                    return 0
            else:
                self.recorder.event(
                    cms,
                    "Normal",
                    "Stamped",
                    f"Created ConfigMap {namespace}/{desired.metadata.name}",
                )
                return 1
        if not _owned_by(current, cms):
            return 0
        if dict(current.data or {}) != desired.data:
            await api.update(current, msgspec.structs.replace(current, data=desired.data))
            self.recorder.event(
                cms, "Normal", "Updated", f"Updated ConfigMap {namespace}/{desired.metadata.name}"
            )
        return 1

    async def _delete_stale(self, cms: ConfigMapSet, *, keep: Iterable[str]) -> int:
        """Delete this set's cached ConfigMaps outside ``keep``; returns how many.

        The cache is enough here: one it has not seen yet is deleted by the reconcile its
        add event triggers.
        """
        return await self._delete(cms, self.stamped.list(), keep=set(keep))

    async def _delete_all(self, cms: ConfigMapSet) -> int:
        """Delete every ConfigMap of this set, listed **live** by label (see the module
        docstring: the finalizer is the last chance to find them); returns how many."""
        meta = cms.metadata
        selector = f"{NAME_LABEL}={meta.name},{NAMESPACE_LABEL}={meta.namespace}"
        live = [cm async for cm in self.client.api(ConfigMap).list_all(label_selector=selector)]
        return await self._delete(cms, live, keep=set())

    async def _delete(
        self, cms: ConfigMapSet, candidates: Iterable[ConfigMap], *, keep: set[str]
    ) -> int:
        removed = 0
        for current in candidates:
            namespace = current.metadata.namespace or ""
            if not _owned_by(current, cms) or namespace in keep:
                continue
            try:
                await self.client.api(ConfigMap, namespace).delete(current.metadata.name or "")
            except NotFound:
                continue  # already gone (our cache lags behind our own delete)
            removed += 1
            self.recorder.event(
                cms, "Normal", "Removed", f"Deleted ConfigMap {namespace}/{current.metadata.name}"
            )
        return removed

    async def _write_status(self, cms: ConfigMapSet, stamped: int, wanted: int) -> None:
        ready = stamped == wanted
        previous = next(
            (c for c in (cms.status.conditions if cms.status else []) if c.type == "Ready"), None
        )
        status = "True" if ready else "False"
        condition = Condition(
            type="Ready",
            status=status,
            reason="AllStamped" if ready else "NameConflicts",
            message=f"{stamped} of {wanted} namespace(s) have the ConfigMap",
            observed_generation=cms.metadata.generation,
            last_transition_time=(
                previous.last_transition_time
                if previous is not None and previous.status == status
                else self.clock.now().replace(microsecond=0)
            ),
        )
        body = {
            "status": {
                "observedGeneration": cms.metadata.generation,
                "namespaceCount": stamped,
                "conditions": [to_dict(condition)],
            }
        }
        current = {"status": to_dict(cms.status)} if cms.status is not None else {}
        if current == body:
            return
        await self.client.api(ConfigMapSet, cms.metadata.namespace).patch_status(
            cms.metadata.name or "", body
        )
        if previous is None or previous.status != status:
            self.recorder.event(
                cms,
                "Normal" if ready else "Warning",
                "Ready" if ready else "NotReady",
                condition.message or "",
            )


def _owned_by(cm: ConfigMap, cms: ConfigMapSet) -> bool:
    """Ours: labelled with this set, and not controlled by another object (a same-named set
    deleted and created again has a new uid; its predecessor's ConfigMap is not ours)."""
    labels = cm.metadata.labels or {}
    controller = get_controller_of(cm)
    return (
        labels.get(NAME_LABEL) == cms.metadata.name
        and labels.get(NAMESPACE_LABEL) == cms.metadata.namespace
        and (controller is None or controller.uid == cms.metadata.uid)
    )


def add_to_manager(manager: Manager, *, workers: int = 2) -> None:
    """Wire the reconciler into ``manager``: reconcile sets, their ConfigMaps, namespaces.

    * ConfigMapSet events (spec or deletion changes; status writes are filtered out).
    * Stamped ConfigMaps (changed or deleted by someone else) enqueue their set, found from
      the labels (owner references would miss the other namespaces).
    * Namespace creations, deletions and label changes enqueue every set (cheap: sets are few).
    """
    recorder = manager.event_recorder("configmapset-controller")
    reconciler = ConfigMapSetReconciler(manager.client, manager, recorder, manager.clock)
    sets = reconciler.sets

    def set_of(cm: ConfigMap) -> list[ObjectKey]:
        labels = cm.metadata.labels or {}
        if NAME_LABEL not in labels or NAMESPACE_LABEL not in labels:
            return []
        return [ObjectKey(labels[NAMESPACE_LABEL], labels[NAME_LABEL])]

    def every_set(_ns: Namespace) -> list[ObjectKey]:
        return [ObjectKey(s.metadata.namespace or "", s.metadata.name or "") for s in sets.list()]

    controller = (
        manager.controller_for(ConfigMapSet, predicates=[spec_or_deletion_changed()])
        .watches(ConfigMap, enqueue_mapped(set_of), label_selector=NAME_LABEL)
        .watches(Namespace, enqueue_mapped(every_set), predicates=[labels_changed()])
        .named(NAME)
        .with_options(max_concurrent_reconciles=workers)
        .build(reconciler)
    )
    manager.add(controller)

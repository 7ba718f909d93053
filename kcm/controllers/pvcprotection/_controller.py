"""The PVC protection controller: a PersistentVolumeClaim keeps its
``kubernetes.io/pvc-protection`` finalizer while a pod uses it, so its data is not deleted under
a running pod.

kube-controller-manager's ``pvc-protection``. A claim without the finalizer (and not being
deleted) gets it; a claim being deleted loses it once no scheduled pod uses it
(:func:`pod_uses_claim`), asked of the pod cache and then, to be sure, of the API server (a
live list of the namespace's pods). Pod events that may release a claim (deleted, terminated,
unscheduled) queue the claims the pod names.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, final

from kcm.controllerkit import (
    POD_PVC_INDEX,
    EnqueueOn,
    QueueController,
    add_pod_pvc_index,
    pod_pvc_keys,
)
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import PersistentVolumeClaim, Pod
from kcm.runtime import Result, add_finalizer, remove_finalizer

from ._usage import pod_may_release_claims, pod_uses_claim

__all__ = ["PVC_PROTECTION_FINALIZER", "PVCProtectionController", "needs_attention"]

logger = logging.getLogger(__name__)

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"


def needs_attention(pvc: PersistentVolumeClaim) -> bool:
    """The finalizer is missing on a live claim, or held by one being deleted."""
    has = PVC_PROTECTION_FINALIZER in (pvc.metadata.finalizers or ())
    return has == (pvc.metadata.deletion_timestamp is not None)


def _if_attention(pvc: PersistentVolumeClaim) -> Iterable[ObjectKey]:
    return (object_key(pvc),) if needs_attention(pvc) else ()


def _claim_keys(pod: Pod) -> list[ObjectKey]:
    return [ObjectKey(*key.split("/", 1)) for key in pod_pvc_keys(pod)]


class _PodClaims:
    """kube's ``podAddedDeletedUpdated``: the claims of a pod that may have released them
    (and of the old pod, when a pod of the same name replaced it)."""

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return _claim_keys(obj) if pod_may_release_claims(obj, deleted=False) else ()

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        keys = _claim_keys(new) if pod_may_release_claims(new, deleted=False) else []
        if old.metadata.uid != new.metadata.uid:
            keys += _claim_keys(old)
        return dict.fromkeys(keys)

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return _claim_keys(obj)


@final
class PVCProtectionController(QueueController):
    """Adds and removes the ``kubernetes.io/pvc-protection`` finalizer.

    Claims and pods (indexed by claim) come from their informers; pods are also listed live
    before a finalizer goes. kube's controller only logs and runs one worker.

    Guarantees:
        * The finalizer is removed only after both the cache and a live list show no
          scheduled pod using the claim.
    """

    queue_name = "pvcprotection"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        claims = factory.informer_for(PersistentVolumeClaim)
        pods = factory.informer_for(Pod)
        add_pod_pvc_index(pods)
        attention = EnqueueOn(_if_attention, add=True, update=True)
        self._claims = self.watch(claims, attention, kind="PersistentVolumeClaim")
        self._pods = self.watch(pods, _PodClaims(), kind="Pod")

    async def reconcile(self, request: ObjectKey) -> Result:
        """Add or remove claim ``request``'s finalizer.

        Raises:
            KcmError: the live pod list or the update failed (retried with backoff).
        """
        pvc = self._claims.get_or_none(request.namespace, request.name)
        if pvc is None or not needs_attention(pvc):
            return Result()
        api: Any = self._client.api(PersistentVolumeClaim, request.namespace)
        try:
            if pvc.metadata.deletion_timestamp is None:
                await add_finalizer(api, pvc, PVC_PROTECTION_FINALIZER)
            elif not await self._in_use(pvc):
                await remove_finalizer(api, pvc, PVC_PROTECTION_FINALIZER)
                logger.info("removed protection finalizer from PVC %s/%s", *request)
        except NotFound:
            pass
        return Result()

    async def _in_use(self, pvc: PersistentVolumeClaim) -> bool:
        key = f"{pvc.metadata.namespace}/{pvc.metadata.name}"
        if any(pod_uses_claim(pod, pvc) for pod in self._pods.by_index(POD_PVC_INDEX, key)):
            return True
        live = await self._client.api(Pod, pvc.metadata.namespace).list()
        return any(pod_uses_claim(pod, pvc) for pod in live.items)

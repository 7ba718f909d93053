"""The PV protection controller: a PersistentVolume keeps its ``kubernetes.io/pv-protection``
finalizer while it is Bound, so it is not removed under a claim.

kube-controller-manager's ``pv-protection``. A PV without the finalizer (and not being deleted)
gets it; a PV being deleted loses it once its phase is not Bound. Both are updates with the
cached resourceVersion; a conflict is retried with backoff.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, final

from kcm.controllerkit import EnqueueOn, QueueController
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import PersistentVolume
from kcm.runtime import Result, add_finalizer, remove_finalizer

__all__ = ["PV_PROTECTION_FINALIZER", "PVProtectionController", "needs_attention"]

logger = logging.getLogger(__name__)

PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"


def needs_attention(pv: PersistentVolume) -> bool:
    """The finalizer is missing on a live PV, or held by one being deleted (kube's
    ``NeedToAddFinalizer || IsDeletionCandidate``)."""
    has = PV_PROTECTION_FINALIZER in (pv.metadata.finalizers or ())
    return has == (pv.metadata.deletion_timestamp is not None)


def _key(pv: PersistentVolume) -> Iterable[ObjectKey]:
    return (ObjectKey("", pv.metadata.name or ""),) if needs_attention(pv) else ()


@final
class PVProtectionController(QueueController):
    """Adds and removes the ``kubernetes.io/pv-protection`` finalizer of cached PVs.

    kube's controller only logs (no events) and runs one worker.
    """

    queue_name = "pvprotection"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        volumes = factory.informer_for(PersistentVolume)
        # kube's handlers: adds and updates of a PV that needs attention; deletions nothing
        attention = EnqueueOn(_key, add=True, update=True)
        self._volumes = self.watch(volumes, attention, kind="PersistentVolume")

    async def reconcile(self, request: ObjectKey) -> Result:
        """Add or remove PV ``request.name``'s finalizer.

        Raises:
            KcmError: the update failed (retried with backoff).
        """
        pv = self._volumes.get_or_none(None, request.name)
        if pv is None or not needs_attention(pv):
            return Result()
        api: Any = self._client.api(PersistentVolume)
        try:
            if pv.metadata.deletion_timestamp is None:
                await add_finalizer(api, pv, PV_PROTECTION_FINALIZER)
            elif (pv.status.phase if pv.status else None) != "Bound":
                await remove_finalizer(api, pv, PV_PROTECTION_FINALIZER)
                logger.info("removed protection finalizer from PV %s", request.name)
        except NotFound:
            pass
        return Result()

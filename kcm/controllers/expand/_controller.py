"""The volume expand controller: what kube-controller-manager does when a bound claim asks for
more storage than it has.

kube-controller-manager's ``persistentvolume-expander``. Its in-tree plugins expand cloud
disks themselves; kcm has none, and a CSI volume (like every volume without an in-tree
expandable plugin) is left to the driver's external resizer: kube records a Warning
``ExternalExpanding`` ``Ignoring the PVC: didn't find a plugin capable of expanding the volume;
waiting for an external controller to process this PVC.`` on the claim, once per sync. A claim
is synced when it is added while Bound, when its storage request grows or its status capacity
grows, and when it is deleted; the sync reads the PV live (as kube does) and retries with
backoff while the PV is missing or not bound to the claim.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from decimal import Decimal
from typing import final

from kcm.controllerkit import QueueController
from kcm.errors import KcmError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key, parse_quantity
from kcm.models.core_v1 import PersistentVolume, PersistentVolumeClaim
from kcm.runtime import Result

__all__ = [
    "PRE_RESIZE_CAPACITY_ANNOTATION",
    "ExpandController",
    "NotBoundToClaim",
    "needs_expansion",
]

logger = logging.getLogger(__name__)

PRE_RESIZE_CAPACITY_ANNOTATION = "volume.alpha.kubernetes.io/pre-resize-capacity"
"""Set on a PV by kube's in-tree resize of a volume that also needs a file system resize."""

_IGNORING = (
    "Ignoring the PVC: didn't find a plugin capable of expanding the volume; waiting for an "
    "external controller to process this PVC."
)


class NotBoundToClaim(KcmError):
    """The claim's PV is not bound to it (retried with backoff, as kube does)."""


def _storage(values: object) -> Decimal:
    try:
        return parse_quantity((values or {}).get("storage") or 0)  # type: ignore[attr-defined]
    except ValueError:
        return Decimal(0)


def requested(claim: PersistentVolumeClaim) -> Decimal:
    resources = claim.spec.resources if claim.spec else None
    return _storage(resources.requests if resources else None)


def capacity(claim: PersistentVolumeClaim) -> Decimal:
    return _storage(claim.status.capacity if claim.status else None)


def needs_expansion(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """The claim asks for more than its status capacity, or the PV carries kube's
    pre-resize-capacity annotation."""
    annotated = PRE_RESIZE_CAPACITY_ANNOTATION in (pv.metadata.annotations or {})
    return requested(claim) > capacity(claim) or annotated


@final
class ExpandController(QueueController):
    """Records why a claim's expansion is left to the external resizer.

    Claims come from their informer, PVs are read live. The recorder gets the
    ``ExternalExpanding`` events (kube's source ``volume_expand``); kube runs 10 workers.
    """

    queue_name = "volume_expand"
    default_workers = 10

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        claims = factory.informer_for(PersistentVolumeClaim)
        self._claims = self.watch(claims, _ClaimEvents(), kind="PersistentVolumeClaim")

    async def reconcile(self, request: ObjectKey) -> Result:
        """Check claim ``request`` and record ``ExternalExpanding`` if it needs expanding.

        Raises:
            KcmError: the PV cannot be read (retried with backoff).
            NotBoundToClaim: the PV is not bound to the claim (retried with backoff).
        """
        claim = self._claims.get_or_none(request.namespace, request.name)
        if claim is None:
            return Result()
        name = (claim.spec.volume_name if claim.spec else None) or ""
        try:
            pv = await self._client.api(PersistentVolume).get(name)
        except NotFound as exc:
            raise KcmError(f'failed to get PV "{name}": {exc}') from exc
        ref = pv.spec.claim_ref if pv.spec else None
        if (
            ref is None
            or ref.namespace != claim.metadata.namespace
            or ref.uid != claim.metadata.uid
        ):
            raise NotBoundToClaim(
                "persistent Volume is not bound to PVC being updated : "
                f"{claim.metadata.namespace}/{claim.metadata.name}"
            )
        if not needs_expansion(claim, pv):
            return Result()
        logger.info(
            "Ignoring the PVC %s/%s: no plugin expands it here; waiting for an external controller",
            claim.metadata.namespace,
            claim.metadata.name,
        )
        if self._recorder is not None:
            self._recorder.event(claim, "Warning", "ExternalExpanding", _IGNORING)
        return Result()


class _ClaimEvents:
    """kube's handlers: a Bound claim added or deleted; an update that grows the request or
    the status capacity."""

    def create_keys(
        self, obj: PersistentVolumeClaim, *, is_in_initial_list: bool
    ) -> Iterable[ObjectKey]:
        return _if_bound(obj)

    def update_keys(
        self, old: PersistentVolumeClaim, new: PersistentVolumeClaim
    ) -> Iterable[ObjectKey]:
        if requested(new) > requested(old) or capacity(new) > capacity(old):
            return _if_bound(new)
        return ()

    def delete_keys(
        self, obj: PersistentVolumeClaim, *, final_state_unknown: bool
    ) -> Iterable[ObjectKey]:
        return _if_bound(obj)


def _if_bound(claim: PersistentVolumeClaim) -> Iterable[ObjectKey]:
    phase = claim.status.phase if claim.status else None
    return (object_key(claim),) if phase == "Bound" else ()

"""The simulated CSI driver's resizer: what the external-resizer sidecar (and, for the file
system, the kubelet) do when a bound claim of a ``simulated.kcm.dev`` volume asks for more.

kube-controller-manager's expand controller leaves CSI volumes to the driver's external
resizer. :class:`CSIResizer` plays it: a Bound claim whose storage request is above its
``status.capacity`` and whose PV is the simulated driver's gets the PV's ``spec.capacity``
raised to the request, then the claim's ``status.capacity`` (the simulated volume needs no
node-side file system resize, so no ``FileSystemResizePending`` condition stays behind), so
``kubectl get pvc`` shows the new size. A claim's size never shrinks (the API server refuses
it).
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import final

import msgspec

from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, PersistentVolume, PersistentVolumeClaim, parse_quantity
from kcm.runtime import Result, enqueue_object

from ._csi_attacher import CSI_DRIVER_NAME
from ._queue_controller import SimulationQueueController

__all__ = ["CSIResizer"]

logger = logging.getLogger(__name__)


def _storage(values: object) -> Decimal:
    try:
        return parse_quantity((values or {}).get("storage") or 0)  # type: ignore[attr-defined]
    except ValueError:
        return Decimal(0)


@final
class CSIResizer(SimulationQueueController):
    """Expands the simulated driver's volumes (a Runnable; runtime controller
    ``sim-csi-resizer``).

    Args:
        client: the API client (PV updates, claim status updates).
        factory: claims and volumes.
        options: :class:`~kcm.controllerkit.QueueControllerOptions` (``clock``: the queue's
            clock; ``registry``: the controller's metrics).
    """

    queue_name = "sim-csi-resizer"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        self._claims = self.watch(factory.informer_for(PersistentVolumeClaim), enqueue_object())
        self._volumes = factory.informer_for(PersistentVolume).lister()

    async def reconcile(self, request: ObjectKey) -> Result:
        """Grow the volume, then the claim's capacity, of the claim ``request`` names."""
        claim = self._claims.get_or_none(request.namespace, request.name)
        if claim is None or claim.spec is None or claim.status is None:
            return Result()
        if claim.status.phase != "Bound" or not claim.spec.volume_name:
            return Result()
        wanted = claim.spec.resources.requests if claim.spec.resources else None
        size = (wanted or {}).get("storage")
        if size is None or _storage(wanted) <= _storage(claim.status.capacity):
            return Result()
        pv = self._volumes.get_or_none(None, claim.spec.volume_name)
        csi = pv.spec.csi if pv is not None and pv.spec else None
        if pv is None or pv.spec is None or csi is None or csi.driver != CSI_DRIVER_NAME:
            return Result()
        ref = pv.spec.claim_ref
        if ref is None or ref.uid != claim.metadata.uid:
            return Result()
        try:
            if _storage(pv.spec.capacity) < _storage(wanted):
                grown = msgspec.structs.replace(
                    pv, spec=msgspec.structs.replace(pv.spec, capacity={"storage": size})
                )
                await self._client.api(PersistentVolume).update(pv, grown)
            status = msgspec.structs.replace(
                claim.status,
                capacity={**(claim.status.capacity or {}), "storage": size},
                conditions=[
                    c
                    for c in claim.status.conditions or ()
                    if c.type not in ("Resizing", "FileSystemResizePending")
                ]
                or None,
            )
            api = self._client.api(PersistentVolumeClaim, namespace=request.namespace)
            await api.update(
                claim, msgspec.structs.replace(claim, status=status), subresource="status"
            )
            logger.info("simulated CSI driver expanded %s to %s", pv.metadata.name, size)
        except (NotFound, Conflict):
            return Result(requeue=True)
        return Result()

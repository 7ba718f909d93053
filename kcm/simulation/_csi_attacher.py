"""The simulated CSI driver's attacher: what the external-attacher sidecar does for
``simulated.kcm.dev`` volumes.

The attach/detach controller only creates and deletes VolumeAttachments; on a real cluster the
driver's external-attacher then attaches the volume and says so. :class:`CSIAttacher` plays it
for the simulated driver:

* it registers the driver: the ``CSIDriver`` ``simulated.kcm.dev`` (``attachRequired: true``)
  and a ``CSINode`` per simulated node listing it (what the node's kubelet does when the
  driver's node plugin registers, ``CSINodeRegistrar``), owned by the Node;
* a VolumeAttachment of the driver gets the ``external-attacher/simulated-kcm-dev`` finalizer
  and then ``status.attached: true`` (attaching a simulated volume always succeeds);
* a VolumeAttachment being deleted is detached: the finalizer is removed (the sidecar's
  ``status.attached: false`` is skipped: the object is gone right after).

The sidecar also puts its finalizer on the PersistentVolume while attached; the simulation
does not (pv-protection already guards a bound PV).
"""

from __future__ import annotations

import logging
import re
from typing import Unpack, final

import anyio
import msgspec
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.controllerkit import QueueControllerOptions
from kcm.errors import AlreadyExists, Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, ObjectMeta
from kcm.models.storage_v1 import (
    CSIDriver,
    CSIDriverSpec,
    VolumeAttachment,
    VolumeAttachmentStatus,
)
from kcm.runtime import Controller, Result, add_finalizer, enqueue_object, remove_finalizer

from ._csi_node import CSINodeRegistrar
from ._provisioner import SIMULATED_DRIVER
from ._queue_controller import SimulationQueueController

__all__ = [
    "ATTACHER_FINALIZER",
    "CSI_DRIVER_NAME",
    "CSIAttacher",
    "VolumeAttacher",
    "attacher_finalizer",
]

logger = logging.getLogger(__name__)

CSI_DRIVER_NAME = SIMULATED_DRIVER
"""The simulated CSI driver (``spec.csi.driver`` of the volumes it provisions, the attacher of
their VolumeAttachments): the provisioner's name, a DNS subdomain as kube-apiserver requires of
a CSI driver name in PVs, VolumeAttachments, CSIDrivers and CSINodes."""


def attacher_finalizer(driver: str) -> str:
    """``external-attacher/<driver>`` with every character but letters, digits and ``-``
    replaced by ``-`` (the sidecar's finalizer name)."""
    return "external-attacher/" + re.sub(r"[^a-zA-Z0-9-]", "-", driver)


ATTACHER_FINALIZER = attacher_finalizer(CSI_DRIVER_NAME)
"""``external-attacher/simulated-kcm-dev``."""


@final
class VolumeAttacher(SimulationQueueController):
    """Attaches and detaches the simulated driver's VolumeAttachments (a Runnable; runtime
    controller ``sim-csi-attacher``; :class:`CSIAttacher` runs it).

    Args:
        client: the API client (VolumeAttachment finalizers and status).
        factory: VolumeAttachments.
        options: :class:`~kcm.controllerkit.QueueControllerOptions` (``clock``: the queue's
            clock; ``registry``: the controller's metrics).
    """

    queue_name = "sim-csi-attacher"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        attachments = factory.informer_for(VolumeAttachment)
        self._attachments = self.watch(attachments, enqueue_object())

    async def reconcile(self, request: ObjectKey) -> Result:
        """Attach, or detach, the VolumeAttachment ``request`` names if it is the driver's."""
        attachment = self._attachments.get_or_none(None, request.name)
        if attachment is None or attachment.spec is None:
            return Result()
        if attachment.spec.attacher != CSI_DRIVER_NAME:
            return Result()
        api = self._client.api(VolumeAttachment)
        finalizer = attacher_finalizer(attachment.spec.attacher)
        held = finalizer in (attachment.metadata.finalizers or ())
        try:
            if attachment.metadata.deletion_timestamp is not None:
                if held:
                    await remove_finalizer(api, attachment, finalizer)
                    logger.info("simulated CSI driver detached %s", request.name)
                return Result()
            if not held:
                await add_finalizer(api, attachment, finalizer)
                return Result()  # the update comes back as an event
            if attachment.status is None or attachment.status.attached is not True:
                attached = msgspec.structs.replace(
                    attachment, status=VolumeAttachmentStatus(attached=True)
                )
                await api.update(attachment, attached, subresource="status")
                logger.info("simulated CSI driver attached %s", request.name)
        except (NotFound, Conflict):
            pass  # gone, or a newer version is queued
        return Result()


@final
class CSIAttacher:
    """Registers the simulated CSI driver and attaches and detaches its volumes (a Runnable;
    runtime controllers ``sim-csi-attacher`` and ``sim-csi-node``).

    Args:
        client: the API client.
        factory: the shared informer factory (VolumeAttachments, Nodes; run it alongside).
        options: :class:`~kcm.controllerkit.QueueControllerOptions` of both controllers
            (``clock``: the queues' clock; ``registry``: the controllers' metrics).

    Attributes:
        attacher: the runtime controller ``sim-csi-attacher`` (:class:`VolumeAttacher`'s).
        node_plugin: the runtime controller ``sim-csi-node`` (:class:`CSINodeRegistrar`'s).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        **options: Unpack[QueueControllerOptions],
    ) -> None:
        self._client = client
        self._volumes = VolumeAttacher(client, factory, **options)
        self._nodes = CSINodeRegistrar(client, factory, **options)
        self.attacher: Controller[ObjectKey] = self._volumes.controller
        self.node_plugin: Controller[ObjectKey] = self._nodes.controller

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Create the CSIDriver, then attach and register nodes until cancelled."""
        try:
            await self._client.api(CSIDriver).create(
                CSIDriver(
                    metadata=ObjectMeta(name=CSI_DRIVER_NAME),
                    spec=CSIDriverSpec(attach_required=True, pod_info_on_mount=False),
                )
            )
        except AlreadyExists:
            pass
        async with anyio.create_task_group() as tg:
            await tg.start(self._volumes.run)
            await tg.start(self._nodes.run)
            task_status.started()

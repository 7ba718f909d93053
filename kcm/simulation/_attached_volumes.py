"""The kubelet's side of attaching: a pod waits for its CSI volumes' VolumeAttachments, and
the node reports the volumes its pods use in ``status.volumesInUse``.

A real kubelet's volume manager waits for the attach/detach controller's attachment before it
mounts (the pod shows ``ContainerCreating``) and lists the volumes it has mounted, or is about
to, in ``volumesInUse``, so the controller does not detach a volume still mounted.
:class:`AttachedVolumes` answers the first question for the simulated kubelet;
:class:`VolumesInUseReporter` (runtime controller ``sim-volumes-in-use``, one key per node)
keeps the second up to date: the CSI volumes of the node's pods that are neither finished nor
being deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import final

from kcm.controllerkit import CSIVolume, csi_volume_of
from kcm.errors import NotFound
from kcm.informers import SharedIndexInformer, SharedInformerFactory
from kcm.models import Node, ObjectKey, PersistentVolume, PersistentVolumeClaim, Pod
from kcm.models.storage_v1 import CSIDriver, VolumeAttachment
from kcm.runtime import Result, enqueue_mapped

from ._config import SIMULATED_LABEL
from ._queue_controller import SimulationQueueController
from ._resources import TERMINAL_PHASES
from ._scheduler import NODE_NAME_INDEX, ensure_node_name_index

__all__ = ["AttachedVolumes", "VolumesInUseReporter"]


def _node_of(pod: Pod) -> list[ObjectKey]:
    node = pod.spec.node_name if pod.spec else None
    return [ObjectKey("", node)] if node else []


class AttachedVolumes:
    """The CSI volumes of a pod and whether the ones that need attaching are attached.

    Args:
        factory: claims, volumes, CSIDrivers and VolumeAttachments come from its informers.
    """

    def __init__(self, factory: SharedInformerFactory) -> None:
        self.attachments: SharedIndexInformer[VolumeAttachment] = factory.informer_for(
            VolumeAttachment
        )
        self._attachments = self.attachments.lister()
        self._claims = factory.informer_for(PersistentVolumeClaim).lister()
        self._volumes = factory.informer_for(PersistentVolume).lister()
        self._drivers = factory.informer_for(CSIDriver).lister()

    def csi_volumes(self, pod: Pod) -> Iterable[CSIVolume]:
        """The bound CSI PVs ``pod``'s volumes are."""
        for volume in (pod.spec.volumes if pod.spec else None) or ():
            found = csi_volume_of(pod, volume, self._claims, self._volumes)
            if not isinstance(found, str):
                yield found

    def attached(self, pod: Pod, node: str) -> bool:
        """Whether every CSI volume of ``pod`` whose driver requires attach (no CSIDriver:
        it does) has an attached VolumeAttachment on ``node``."""
        for volume in self.csi_volumes(pod):
            driver = self._drivers.get_or_none(None, volume.driver)
            if driver is not None and driver.spec and driver.spec.attach_required is False:
                continue
            attachment = self._attachments.get_or_none(None, volume.attachment_name(node))
            if attachment is None or attachment.status is None or not attachment.status.attached:
                return False
        return True


@final
class VolumesInUseReporter(SimulationQueueController):
    """Writes each simulated node's ``status.volumesInUse`` (a Runnable; runtime controller
    ``sim-volumes-in-use``).

    Args:
        client: the API client (node status patches).
        factory: pods and nodes (and what :class:`AttachedVolumes` reads).
        options: :class:`~kcm.controllerkit.QueueControllerOptions` (``clock``: the queue's
            clock; ``registry``: the controller's metrics).
    """

    queue_name = "sim-volumes-in-use"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        pods = factory.informer_for(Pod)
        ensure_node_name_index(pods)
        nodes = factory.informer_for(Node)
        self._volumes = AttachedVolumes(factory)
        self._pods = self.watch(pods, enqueue_mapped(_node_of))
        self._nodes = self.watch(
            nodes, enqueue_mapped(lambda n: [ObjectKey("", n.metadata.name or "")])
        )

    def in_use(self, node: str) -> list[str]:
        """The unique names of the CSI volumes the node's live pods use, sorted."""
        names: set[str] = set()
        for pod in self._pods.by_index(NODE_NAME_INDEX, node):
            phase = pod.status.phase if pod.status else None
            if phase in TERMINAL_PHASES or pod.metadata.deletion_timestamp is not None:
                continue
            names.update(v.unique_name for v in self._volumes.csi_volumes(pod))
        return sorted(names)

    async def reconcile(self, request: ObjectKey) -> Result:
        """Write the volumes in use of the simulated node ``request`` names."""
        node = self._nodes.get_or_none(None, request.name)
        if node is None or (node.metadata.labels or {}).get(SIMULATED_LABEL) != "true":
            return Result()
        wanted = self.in_use(request.name)
        if list((node.status.volumes_in_use if node.status else None) or ()) == wanted:
            return Result()
        try:
            await self._client.api(Node).patch_status(
                request.name, {"status": {"volumesInUse": wanted or None}}
            )
        except NotFound:
            pass
        return Result()

"""CSI volumes as kube's attach/detach machinery names them (``pkg/volume/csi``): the
VolumeAttachment of a volume on a node, the unique volume name nodes report in
``status.volumesAttached``/``volumesInUse``, and the PV behind a pod's volume.

The attach/detach controller writes these names and a simulated CSI driver and kubelet read
them, so both sides live here."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from kcm.informers import Lister
from kcm.models.core_v1 import Node, PersistentVolume, PersistentVolumeClaim, Pod, Volume

from ._pod_volumes import ephemeral_claim_name, ephemeral_claim_refusal

__all__ = [
    "CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION",
    "CSI_PLUGIN_NAME",
    "KEEP_TERMINATED_POD_VOLUMES_ANNOTATION",
    "CSIVolume",
    "csi_unique_volume_name",
    "csi_volume_of",
    "is_controller_managed",
    "is_pod_terminated",
    "volume_attachment_name",
]

CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION = (
    "volumes.kubernetes.io/controller-managed-attach-detach"
)
"""A Node with this annotation (any value) has its volumes attached by the attach/detach
controller; kubelets set it when they register (``--enable-controller-attach-detach``)."""

KEEP_TERMINATED_POD_VOLUMES_ANNOTATION = "volumes.kubernetes.io/keep-terminated-pod-volumes"
"""``"true"`` on a Node: volumes of its terminated pods stay attached."""

CSI_PLUGIN_NAME = "kubernetes.io/csi"
"""The in-tree plugin every CSI driver's volumes go through."""


@dataclass(frozen=True)
class CSIVolume:
    """A CSI PersistentVolume a pod uses.

    Attributes:
        pv_name: the PersistentVolume.
        driver: ``spec.csi.driver``.
        handle: ``spec.csi.volumeHandle``.
    """

    pv_name: str
    driver: str
    handle: str

    @property
    def unique_name(self) -> str:
        """:func:`csi_unique_volume_name` of this volume."""
        return csi_unique_volume_name(self.driver, self.handle)

    def attachment_name(self, node: str) -> str:
        """:func:`volume_attachment_name` of this volume on ``node``."""
        return volume_attachment_name(self.handle, self.driver, node)


def volume_attachment_name(handle: str, driver: str, node: str) -> str:
    """``csi-<sha256(handle + driver + node)>``: kube's name of the VolumeAttachment of one
    volume on one node (the external attacher and kubelet look for exactly this name)."""
    return "csi-" + hashlib.sha256(f"{handle}{driver}{node}".encode()).hexdigest()


def csi_unique_volume_name(driver: str, handle: str) -> str:
    """``kubernetes.io/csi/<driver>^<handle>``: the name a node reports the volume by."""
    return f"{CSI_PLUGIN_NAME}/{driver}^{handle}"


def is_controller_managed(node: Node) -> bool:
    """Whether the attach/detach controller attaches ``node``'s volumes (the annotation is
    present, whatever its value, as kube checks)."""
    return CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION in (node.metadata.annotations or {})


def is_pod_terminated(pod: Pod) -> bool:
    """kube's ``IsPodTerminated``: Succeeded or Failed, or being deleted with no container
    running (no statuses count as none running)."""
    status = pod.status
    if status is not None and status.phase in ("Succeeded", "Failed"):
        return True
    if pod.metadata.deletion_timestamp is None:
        return False
    lists = (
        (
            status.init_container_statuses,
            status.container_statuses,
            status.ephemeral_container_statuses,
        )
        if status is not None
        else ()
    )
    return not any(
        s.state is None or (s.state.terminated is None and s.state.waiting is None)
        for statuses in lists
        for s in statuses or ()
    )


def csi_volume_of(
    pod: Pod,
    volume: Volume,
    claims: Lister[PersistentVolumeClaim],
    volumes: Lister[PersistentVolume],
) -> CSIVolume | str:
    """The CSI PV behind ``pod``'s ``volume`` (a claim, or a generic ephemeral volume's claim),
    or why there is none yet (kube's ``CreateVolumeSpec`` checks: the claim is Bound, the PV
    exists and its claimRef points back at the claim; not a CSI PV)."""
    claim_name = None
    if volume.persistent_volume_claim is not None:
        claim_name = volume.persistent_volume_claim.claim_name
    if volume.ephemeral is not None:
        claim_name = ephemeral_claim_name(pod, volume)
    if not claim_name:
        return f"volume {volume.name!r} is not a claim"
    namespace = pod.metadata.namespace or ""
    claim = claims.get_or_none(namespace, claim_name)
    if claim is None:
        return f"failed to find PVC {namespace}/{claim_name} in PVCInformer cache"
    pv_name = claim.spec.volume_name if claim.spec else None
    if (claim.status.phase if claim.status else None) != "Bound" or not pv_name:
        return f"PVC {namespace}/{claim_name} has non-bound phase or empty pvc.Spec.VolumeName"
    if volume.ephemeral is not None:
        refusal = ephemeral_claim_refusal(pod, claim)
        if refusal is not None:
            return refusal
    pv = volumes.get_or_none(None, pv_name)
    if pv is None:
        return f"failed to find PV {pv_name!r} in PVInformer cache"
    ref = pv.spec.claim_ref if pv.spec else None
    if ref is None:
        return f"found PV object {pv_name!r} but it has a nil pv.Spec.ClaimRef"
    if ref.uid != claim.metadata.uid:
        return (
            f"found PV object {pv_name!r} but its pv.Spec.ClaimRef.UID does not point to the claim"
        )
    csi = pv.spec.csi if pv.spec else None
    if csi is None or not csi.driver or not csi.volume_handle:
        return f"PV {pv_name!r} is not a CSI volume"
    return CSIVolume(pv_name, csi.driver, csi.volume_handle)

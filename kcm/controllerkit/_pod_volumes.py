"""Pods and the PersistentVolumeClaims their volumes use (kube's ``component-helpers/storage/
ephemeral`` and ``pkg/controller/volume/common``): a generic ephemeral volume's claim is
``<pod>-<volume>``, owned by the pod; the pod→claim index the volume controllers share."""

from __future__ import annotations

from kcm.informers import SharedIndexInformer
from kcm.models.core_v1 import PersistentVolumeClaim, Pod, Volume

__all__ = [
    "POD_PVC_INDEX",
    "add_pod_pvc_index",
    "ephemeral_claim_name",
    "ephemeral_claim_refusal",
    "pod_pvc_keys",
]

POD_PVC_INDEX = "pod-pvc-index"
"""The index of pods by ``<namespace>/<claim>`` of each claim they use."""


def ephemeral_claim_name(pod: Pod, volume: Volume) -> str:
    """The claim a generic ephemeral volume gets: ``<pod name>-<volume name>``."""
    return f"{pod.metadata.name}-{volume.name}"


def ephemeral_claim_refusal(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """Why ``pvc`` is not ``pod``'s ephemeral claim (another controller owns it), or None
    (kube's ``VolumeIsForPod``)."""
    owned = any(
        ref.controller and ref.uid == pod.metadata.uid
        for ref in pvc.metadata.owner_references or ()
    )
    if pvc.metadata.namespace != pod.metadata.namespace or not owned:
        return (
            f"PVC {pvc.metadata.namespace}/{pvc.metadata.name} was not created for pod "
            f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
        )
    return None


def pod_pvc_keys(pod: Pod) -> list[str]:
    """``<namespace>/<claim>`` of each claim ``pod`` uses, directly or as an ephemeral
    volume (kube's ``PodPVCIndexFunc``)."""
    keys = []
    for volume in (pod.spec.volumes if pod.spec else None) or ():
        claim = None
        if volume.persistent_volume_claim is not None:
            claim = volume.persistent_volume_claim.claim_name
        elif volume.ephemeral is not None:
            claim = ephemeral_claim_name(pod, volume)
        if claim:
            keys.append(f"{pod.metadata.namespace}/{claim}")
    return keys


def add_pod_pvc_index(informer: SharedIndexInformer[Pod]) -> None:
    """Add :data:`POD_PVC_INDEX` to a pod informer unless another controller already has."""
    try:
        informer.add_indexers({POD_PVC_INDEX: pod_pvc_keys})
    except ValueError:  # already there: the informer is shared
        pass

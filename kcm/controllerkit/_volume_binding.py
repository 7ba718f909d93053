"""PersistentVolume ↔ claim binding vocabulary shared by the PV binder, a scheduler's volume
binder and an external provisioner: the annotations they talk through
(``pkg/controller/volume/persistentvolume/util``) and the few questions all three ask (which
class a claim or volume is of, whether a volume is bound to a claim, whether a volume may be
used on a node)."""

from __future__ import annotations

from kcm.models.core_v1 import Node, PersistentVolume, PersistentVolumeClaim

from ._node_affinity import node_selector_matches

__all__ = [
    "ANN_BETA_STORAGE_CLASS",
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "claim_class",
    "is_volume_bound_to_claim",
    "volume_class",
    "volume_fits_node",
]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
"""On a claim: the binder finished binding it (the claim is then synced as bound)."""
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
"""On a claim or volume: the binder (not the user) set ``volumeName`` / ``claimRef``."""
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
"""On a claim: the external provisioner asked to provision a volume for it."""
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
"""The beta spelling of :data:`ANN_STORAGE_PROVISIONER`, still set alongside it."""
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
"""On a volume: the provisioner that created it (and is asked to delete it)."""
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
"""On a WaitForFirstConsumer claim: the node the scheduler chose for its first pod."""
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
"""The class annotation that predates ``storageClassName`` (it wins when set)."""


def claim_class(claim: PersistentVolumeClaim) -> str:
    """The claim's class name, ``""`` for none (kube's ``GetPersistentVolumeClaimClass``)."""
    annotations = claim.metadata.annotations or {}
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return (claim.spec.storage_class_name if claim.spec else None) or ""


def volume_class(volume: PersistentVolume) -> str:
    """The volume's class name, ``""`` for none (kube's ``GetPersistentVolumeClass``)."""
    annotations = volume.metadata.annotations or {}
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return (volume.spec.storage_class_name if volume.spec else None) or ""


def is_volume_bound_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The volume's ``claimRef`` names the claim (and its UID, when the ref has one)."""
    ref = volume.spec.claim_ref if volume.spec else None
    if ref is None:
        return False
    if ref.name != claim.metadata.name or ref.namespace != claim.metadata.namespace:
        return False
    return not ref.uid or ref.uid == claim.metadata.uid


def volume_fits_node(volume: PersistentVolume, node: Node) -> bool:
    """The volume's required ``nodeAffinity`` (if any) selects ``node``."""
    affinity = volume.spec.node_affinity if volume.spec else None
    if affinity is None or affinity.required is None:
        return True
    return node_selector_matches(affinity.required, node)

"""Which CSI volumes should be attached to one node (kube's desired state of the world,
computed per node from the caches instead of kept as a second cache)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kcm.controllerkit import (
    KEEP_TERMINATED_POD_VOLUMES_ANNOTATION,
    CSIVolume,
    csi_volume_of,
    is_controller_managed,
    is_pod_terminated,
)
from kcm.informers import Lister
from kcm.models.core_v1 import Node, PersistentVolume, PersistentVolumeClaim, Pod

__all__ = ["WantedVolume", "wanted_volumes"]


@dataclass
class WantedVolume:
    """A volume to attach to the node, and the pods that need it (for events)."""

    volume: CSIVolume
    pods: list[Pod] = field(default_factory=list)


def wanted_volumes(
    node: Node | None,
    pods: Iterable[Pod],
    claims: Lister[PersistentVolumeClaim],
    volumes: Lister[PersistentVolume],
    attach_required: Callable[[str], bool],
) -> dict[str, WantedVolume]:
    """The volumes to attach to ``node`` by VolumeAttachment name, in pod order.

    None unless the node exists and is controller-managed; a pod's volumes count while it is
    not terminated (or always, with the node's keep-terminated-pod-volumes annotation); a
    volume counts if it is a bound CSI PV whose driver requires attach (``attach_required``).
    """
    if node is None or not is_controller_managed(node):
        return {}
    keep = (node.metadata.annotations or {}).get(KEEP_TERMINATED_POD_VOLUMES_ANNOTATION) == "true"
    name = node.metadata.name or ""
    wanted: dict[str, WantedVolume] = {}
    for pod in pods:
        if not keep and is_pod_terminated(pod):
            continue
        for volume in (pod.spec.volumes if pod.spec else None) or ():
            found = csi_volume_of(pod, volume, claims, volumes)
            if isinstance(found, str) or not attach_required(found.driver):
                continue
            entry = wanted.setdefault(found.attachment_name(name), WantedVolume(found))
            entry.pods.append(pod)
    return wanted

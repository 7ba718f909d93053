"""Attach/detach: a VolumeAttachment for a bound CSI PV a pod on a managed node uses, deleted
when the pod goes; none for a driver that needs no attach or a node the controller does not
manage. No external attacher runs, so the attachments stay unattached on both sides."""

from __future__ import annotations

from typing import Any

from kcm.controllerkit import volume_attachment_name

from ..scenario import (
    BindVolume,
    Create,
    CreateNode,
    Delete,
    Patch,
    PatchNode,
    Scenario,
    Settle,
    Step,
)
from ._objects import claim, pod_with_claim

MANAGED = {
    "metadata": {"annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true"}}
}
DRIVER = "attach.df.example.com"
NO_ATTACH = "noattach.df.example.com"


def volume(name: str, driver: str = DRIVER) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "csi": {"driver": driver, "volumeHandle": f"handle-{name}"},
        },
    }


def managed_node(name: str) -> tuple[Step, ...]:
    """A node whose kubelet leaves attach and detach to the controller."""
    return (CreateNode(name), PatchNode(name, MANAGED))


def bound_claim(claim_name: str, volume_name: str) -> tuple[Step, ...]:
    """A CSI PV of :data:`DRIVER` and a claim bound to it."""
    return (
        Create(volume(volume_name)),
        Create(claim(claim_name, volume_name)),
        BindVolume(claim_name, volume_name),
    )


def pod_using_volume(pod: str, claim_name: str, volume_name: str, node: str) -> tuple[Step, ...]:
    """A managed node, a bound claim, then a pod using it on that node (settled after each)."""
    return (
        *managed_node(node),
        *bound_claim(claim_name, volume_name),
        Settle(),
        Create(pod_with_claim(pod, claim_name, node)),
        Settle(),
    )


NODE = "attachdetach-node"
OTHER = "attachdetach-unmanaged"
SKIP_NODE = "attachdetach-skip-node"
ATTACHED_NODE = "attachdetach-attached-node"
MULTI_1 = "attachdetach-multi-1"
MULTI_2 = "attachdetach-multi-2"
KINDS = ("volumeattachments", "pods", "events")

SCENARIOS = [
    Scenario(
        "attachdetach/attached-while-a-pod-uses-it",
        (
            *pod_using_volume("user", "data", "df-attachdetach-pv", NODE),
            Delete("pods", "user", grace_period_seconds=0),
            Settle(),
        ),
        kinds=KINDS,
        doc="csi-<sha256> with the driver as attacher, the node and the PV; gone with the pod.",
    ),
    Scenario(
        "attachdetach/no-attachment-without-attach-or-management",
        (
            *managed_node(SKIP_NODE),
            CreateNode(OTHER),
            Create(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSIDriver",
                    "metadata": {"name": NO_ATTACH},
                    "spec": {"attachRequired": False},
                }
            ),
            Create(volume("df-attachdetach-noattach-pv", NO_ATTACH)),
            Create(volume("df-attachdetach-unmanaged-pv")),
            Create(claim("skipped", "df-attachdetach-noattach-pv")),
            Create(claim("elsewhere", "df-attachdetach-unmanaged-pv")),
            BindVolume("skipped", "df-attachdetach-noattach-pv"),
            BindVolume("elsewhere", "df-attachdetach-unmanaged-pv"),
            Settle(),
            Create(pod_with_claim("no-attach", "skipped", SKIP_NODE)),
            Create(pod_with_claim("unmanaged", "elsewhere", OTHER)),
            Settle(),
        ),
        kinds=KINDS,
        doc="attachRequired: false and a node without the annotation: no VolumeAttachment.",
    ),
    Scenario(
        "attachdetach/multi-attach-waits-for-the-other-node",
        (
            *managed_node(MULTI_1),
            *managed_node(MULTI_2),
            *bound_claim("shared", "df-attachdetach-multi-pv"),
            Settle(),
            Create(pod_with_claim("first", "shared", MULTI_1)),
            Settle(),
            Create(pod_with_claim("second", "shared", MULTI_2)),
            Settle(),
        ),
        kinds=KINDS,
        doc="A ReadWriteOnce volume attaching to one node: the pod on the other is told why.",
    ),
    Scenario(
        "attachdetach/attached-then-detached-at-once",
        (
            *pod_using_volume("user", "data", "df-attachdetach-attached-pv", ATTACHED_NODE),
            Patch(
                "volumeattachments",
                volume_attachment_name("handle-df-attachdetach-attached-pv", DRIVER, ATTACHED_NODE),
                {"status": {"attached": True}},
                subresource="status",
            ),
            Settle(),
            Delete("pods", "user", grace_period_seconds=0),
            Settle(),
        ),
        kinds=KINDS,
        doc="Attached (as an external attacher says): SuccessfulAttachVolume; the pod's deletion "
        "then detaches at once (no kubelet reports the volume in use).",
    ),
]

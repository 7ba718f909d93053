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
)

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


def claim(name: str, volume_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "volumeName": volume_name,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def pod(name: str, claim_name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "main", "image": "busybox"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
        },
    }


NODE = "attachdetach-node"
OTHER = "attachdetach-unmanaged"
SKIP_NODE = "attachdetach-skip-node"
ATTACHED_NODE = "attachdetach-attached-node"
MULTI_1 = "attachdetach-multi-1"
MULTI_2 = "attachdetach-multi-2"

SCENARIOS = [
    Scenario(
        "attachdetach/attached-while-a-pod-uses-it",
        (
            CreateNode(NODE),
            PatchNode(NODE, MANAGED),
            Create(volume("df-attachdetach-pv")),
            Create(claim("data", "df-attachdetach-pv")),
            BindVolume("data", "df-attachdetach-pv"),
            Settle(),
            Create(pod("user", "data", NODE)),
            Settle(),
            Delete("pods", "user", grace_period_seconds=0),
            Settle(),
        ),
        kinds=("volumeattachments", "pods", "events"),
        doc="csi-<sha256> with the driver as attacher, the node and the PV; gone with the pod.",
    ),
    Scenario(
        "attachdetach/no-attachment-without-attach-or-management",
        (
            CreateNode(SKIP_NODE),
            PatchNode(SKIP_NODE, MANAGED),
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
            Create(pod("no-attach", "skipped", SKIP_NODE)),
            Create(pod("unmanaged", "elsewhere", OTHER)),
            Settle(),
        ),
        kinds=("volumeattachments", "pods", "events"),
        doc="attachRequired: false and a node without the annotation: no VolumeAttachment.",
    ),
    Scenario(
        "attachdetach/multi-attach-waits-for-the-other-node",
        (
            CreateNode(MULTI_1),
            PatchNode(MULTI_1, MANAGED),
            CreateNode(MULTI_2),
            PatchNode(MULTI_2, MANAGED),
            Create(volume("df-attachdetach-multi-pv")),
            Create(claim("shared", "df-attachdetach-multi-pv")),
            BindVolume("shared", "df-attachdetach-multi-pv"),
            Settle(),
            Create(pod("first", "shared", MULTI_1)),
            Settle(),
            Create(pod("second", "shared", MULTI_2)),
            Settle(),
        ),
        kinds=("volumeattachments", "pods", "events"),
        doc="A ReadWriteOnce volume attaching to one node: the pod on the other is told why.",
    ),
    Scenario(
        "attachdetach/attached-then-detached-at-once",
        (
            CreateNode(ATTACHED_NODE),
            PatchNode(ATTACHED_NODE, MANAGED),
            Create(volume("df-attachdetach-attached-pv")),
            Create(claim("data", "df-attachdetach-attached-pv")),
            BindVolume("data", "df-attachdetach-attached-pv"),
            Settle(),
            Create(pod("user", "data", ATTACHED_NODE)),
            Settle(),
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
        kinds=("volumeattachments", "pods", "events"),
        doc="Attached (as an external attacher says): SuccessfulAttachVolume; the pod's deletion "
        "then detaches at once (no kubelet reports the volume in use).",
    ),
]

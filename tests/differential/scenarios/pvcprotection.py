"""PVC protection: a claim being deleted stays while a scheduled pod uses it."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, CreateNode, Delete, Scenario, Settle

NODE = "pvcprotection-node"


def claim(name: str) -> dict[str, Any]:
    """A claim no volume binds (no storage class: neither side provisions one)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def pod_with_claim(name: str, claim_name: str, node: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


SCENARIOS = [
    Scenario(
        "pvcprotection/claim-held-while-a-scheduled-pod-uses-it",
        (
            CreateNode(NODE),
            Create(claim("data")),
            Create(pod_with_claim("user", "data", NODE)),
            Create(pod_with_claim("unscheduled", "data", None)),
            Settle(),
            Delete("persistentvolumeclaims", "data"),
            Settle(),
            Delete("pods", "user", grace_period_seconds=0),
            Settle(),
        ),
        kinds=("persistentvolumeclaims", "pods"),
        doc="The unscheduled pod does not hold the claim; the scheduled one does until it goes.",
    ),
    Scenario(
        "pvcprotection/unused-claim-goes-at-once",
        (Create(claim("spare")), Settle(), Delete("persistentvolumeclaims", "spare"), Settle()),
        kinds=("persistentvolumeclaims",),
    ),
]

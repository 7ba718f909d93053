"""PVC protection: a claim being deleted stays while a scheduled pod uses it."""

from __future__ import annotations

from ..scenario import Create, CreateNode, Delete, Scenario, Settle
from ._objects import claim, pod_with_claim

NODE = "pvcprotection-node"


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

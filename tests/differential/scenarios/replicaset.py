"""ReplicaSets: pod counts, adoption, scale-down order."""

from __future__ import annotations

from ..scenario import Create, Delete, Kubelet, Patch, Scenario, Settle
from ._objects import bare_pod, replicaset

KINDS = ("replicasets", "pods", "events")

SCENARIOS = [
    Scenario(
        "replicaset/create-and-ready",
        (Create(replicaset("rs", 3)), Settle(), Kubelet("app=rs"), Settle()),
        kinds=KINDS,
    ),
    Scenario(
        "replicaset/adopts-orphans",
        (
            Create(bare_pod("orphan-a", "rs")),
            Create(bare_pod("orphan-b", "rs")),
            Create(replicaset("rs", 3)),
            Settle(),
        ),
        kinds=KINDS,
        doc="two matching orphans are adopted; one pod is created",
    ),
    Scenario(
        "replicaset/scale-down-prefers-not-ready",
        (
            Create(replicaset("rs", 3)),
            Settle(),
            Kubelet("app=rs", count=2),
            Settle(),
            Patch("replicasets", "rs", {"spec": {"replicas": 2}}),
            Settle(),
        ),
        kinds=KINDS,
        doc="scaling 3 -> 2 deletes the pod that is not ready",
    ),
    Scenario(
        "replicaset/replaces-deleted-pod",
        (
            Create(bare_pod("keep", "rs")),
            Create(replicaset("rs", 1)),
            Settle(),
            Delete("pods", "keep"),
            Settle(),
        ),
        kinds=KINDS,
    ),
]

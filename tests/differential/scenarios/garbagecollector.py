"""The garbage collector: cascading deletion in its three modes."""

from __future__ import annotations

from ..scenario import Create, Delete, Scenario, Settle
from ._objects import deployment, replicaset

SCENARIOS = [
    Scenario(
        f"garbagecollector/delete-deployment-{mode.lower()}",
        (Create(deployment("web", 2)), Settle(), Delete("deployments", "web", mode), Settle()),
        kinds=("deployments", "replicasets", "pods"),
        doc=f"{mode} deletion of a Deployment",
    )
    for mode in ("Background", "Foreground", "Orphan")
] + [
    Scenario(
        "garbagecollector/delete-replicaset-default",
        (Create(replicaset("rs", 2)), Settle(), Delete("replicasets", "rs"), Settle()),
        kinds=("replicasets", "pods"),
    ),
]

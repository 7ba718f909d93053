"""Deployments: rollouts through ReplicaSets as the Go controller runs them."""

from __future__ import annotations

from ..scenario import Create, Patch, Scenario, Settle
from ._objects import deployment
from ._steps import made_ready

IMAGE_1 = {
    "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}
}
IMAGE_2 = {
    "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}}}
}

SCENARIOS = [
    Scenario(
        "deployment/create-and-become-available",
        (
            Create(deployment("web", 3)),
            Settle(),
            *made_ready("web"),
        ),
        doc="3 replicas: one ReplicaSet, 3 pods; Ready pods make the Deployment Available",
    ),
    Scenario(
        "deployment/rolling-update",
        (
            Create(deployment("web", 2)),
            Settle(),
            *made_ready("web"),
            Patch("deployments", "web", IMAGE_2),
            Settle(),
            *made_ready("web", 2),
        ),
        doc="an image change rolls out step by step as new pods become ready",
    ),
    Scenario(
        "deployment/scale-up-and-down",
        (
            Create(deployment("web", 1)),
            Settle(),
            *made_ready("web"),
            Patch("deployments", "web", {"spec": {"replicas": 4}}),
            Settle(),
            *made_ready("web"),
            Patch("deployments", "web", {"spec": {"replicas": 2}}),
            Settle(),
        ),
    ),
    Scenario(
        "deployment/recreate",
        (
            Create(deployment("web", 2, strategy={"type": "Recreate"})),
            Settle(),
            *made_ready("web"),
            Patch("deployments", "web", IMAGE_2),
            Settle(),
        ),
        doc="Recreate scales the old ReplicaSet to 0 before creating the new one's pods",
    ),
    Scenario(
        "deployment/rollback-reuses-the-old-replicaset",
        (
            Create(deployment("web", 2)),
            Settle(),
            *made_ready("web"),
            Patch("deployments", "web", IMAGE_2),
            Settle(),
            *made_ready("web"),
            Patch("deployments", "web", IMAGE_1),
            Settle(),
        ),
        doc="going back to the first template scales the first ReplicaSet up again (revision 3)",
    ),
    Scenario(
        "deployment/paused",
        (
            Create(deployment("web", 1, paused=True)),
            Settle(),
            Patch("deployments", "web", {"spec": {"paused": False}}),
            Settle(),
        ),
        doc="a paused Deployment makes no ReplicaSet until resumed",
    ),
]

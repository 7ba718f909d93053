"""ReplicationControllers: the ReplicaSet machinery on core/v1."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Kubelet, Patch, Scenario, Settle
from ._objects import pod_template

KINDS = ("replicationcontrollers", "pods", "events")


def rc(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"app": name}, "template": pod_template(name)},
    }


SCENARIOS = [
    Scenario(
        "replicationcontroller/create-ready-and-scale-down",
        (
            Create(rc("rc", 3)),
            Settle(),
            Kubelet("app=rc", count=2),
            Settle(),
            Patch("replicationcontrollers", "rc", {"spec": {"replicas": 1}}),
            Settle(),
        ),
        kinds=KINDS,
    ),
]

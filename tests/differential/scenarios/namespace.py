"""Namespace deletion: the controller empties a terminating namespace, then it goes."""

from __future__ import annotations

from ..scenario import Create, DeleteNamespace, Scenario, Settle
from ._objects import deployment

SCENARIOS = [
    Scenario(
        "namespace/delete-empties-and-removes",
        (Create(deployment("web", 2)), Settle(), DeleteNamespace(), Settle(timeout=90)),
        kinds=("namespace", "deployments", "replicasets", "pods"),
    ),
]

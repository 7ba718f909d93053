"""The pod garbage collector: a pod bound to a Node that is gone is deleted once the node has
been missing for the quarantine (40 s in 1.24)."""

from __future__ import annotations

from ..scenario import Create, CreateNode, DeleteNode, Scenario, Settle, Until

NODE = "podgc-orphans-1"

SCENARIOS = [
    Scenario(
        "podgc/pod-of-a-deleted-node",
        (
            CreateNode(NODE),
            Create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "orphan", "labels": {"app": "orphan"}},
                    "spec": {
                        "nodeName": NODE,
                        "containers": [{"name": "main", "image": "nginx:1.25"}],
                    },
                }
            ),
            Settle(),
            DeleteNode(NODE),
            Until("pods", 0, timeout=120, at_most=True),
            Settle(),
        ),
        kinds=("pods",),
    ),
]

"""Node lifecycle: a node whose kubelet stops renewing its Lease goes unreachable; its pods are
marked not Ready and evicted when their NoExecute toleration runs out.

Both controller managers run with ``--node-monitor-period=1s --node-monitor-grace-period=10s``
(the recording's ``EXTRA_KCM_FLAGS``, the replay's arguments in ``harness.py``), so the node is
found silent about 10 s after ``StopNode``. Pods are created bound (``nodeName``), as a
scheduler leaves them; ``quick`` tolerates the two NoExecute taints for 2 s, ``patient`` gets
kube-apiserver's 300 s from DefaultTolerationSeconds admission and outlasts the scenario.
"""

from __future__ import annotations

from typing import Any

from ..scenario import Create, CreateNode, Kubelet, Scenario, Settle, StopNode, Until

KINDS = ("pods", "events")


def bound_pod(name: str, node: str, tolerate_seconds: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [{"name": "main", "image": "web:1"}],
    }
    if tolerate_seconds is not None:
        spec["tolerations"] = [
            {
                "key": f"node.kubernetes.io/{key}",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": tolerate_seconds,
            }
            for key in ("not-ready", "unreachable")
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "nlc"}},
        "spec": spec,
    }


SCENARIOS = [
    Scenario(
        "nodelifecycle/silent-node-pods-not-ready-then-evicted",
        (
            CreateNode("nlc-silent-1"),
            CreateNode("nlc-silent-2"),
            Create(bound_pod("quick", "nlc-silent-1", tolerate_seconds=2)),
            Create(bound_pod("patient", "nlc-silent-1")),
            Create(bound_pod("elsewhere", "nlc-silent-2")),
            Kubelet("app=nlc"),
            Settle(),
            StopNode("nlc-silent-1"),
            # NodeNotReady on quick and patient, then TaintManagerEviction for quick
            Until("events", 3, timeout=60),
            Settle(quiet=3.0),
        ),
        kinds=KINDS,
        doc="a node stops renewing its Lease: its pods go not Ready, the one tolerating 2 s "
        "is evicted, the other node's pod is untouched",
        extra={"pod_nodes": True},
    ),
]

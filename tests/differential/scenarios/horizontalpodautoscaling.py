"""HorizontalPodAutoscaler: what the Go controller shows on a cluster without metrics-server.

Only states that stop changing can be snapshotted: an HPA whose metrics fail is reconciled
(with a new warning event) every sync period forever, so the scenarios here avoid reading
metrics (the metrics paths are covered against the embedded server's metrics.k8s.io in
tests/integration/controllers/horizontalpodautoscaling/).
"""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Scenario, Settle
from ._objects import deployment

_KINDS = ("deployments", "replicasets", "horizontalpodautoscalers", "events")


def hpa(name: str, target: str, *, min_replicas: int = 1, max_replicas: int = 5) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": min_replicas,
            "maxReplicas": max_replicas,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50},
                    },
                }
            ],
        },
    }


SCENARIOS = [
    Scenario(
        "horizontalpodautoscaling/target-at-zero-disables-scaling",
        (
            Create(deployment("web", 0)),
            Settle(),
            Create(hpa("web", "web")),
            # the first sync comes up to one sync period (15s) after the create, later under load;
            # kcm's comes at its next 15 s beat, so a window past one beat holds it
            Settle(quiet=35.0, timeout=120.0, replay_quiet=16.0),
        ),
        kinds=_KINDS,
        doc="A target scaled to 0 with minReplicas 1: ScalingActive False ScalingDisabled, "
        "AbleToScale True SucceededGetScale, no rescale and no event.",
    ),
]

"""HorizontalPodAutoscalers stored as autoscaling/v2 and served as v1 or v2 (kube's
conversion, with what v1 cannot say kept in annotations)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._strategy.autoscaling.horizontalpodautoscalers import to_v1, to_v2

pytestmark = pytest.mark.anyio

_REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
_CPU = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
}
_MEMORY = {
    "type": "Resource",
    "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}},
}


def _v2() -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": _REF,
            "maxReplicas": 5,
            "metrics": [_CPU, _MEMORY],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        },
        "status": {
            "currentReplicas": 2,
            "desiredReplicas": 2,
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "current": {"averageUtilization": 40}},
                }
            ],
            "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}],
        },
    }


def test_v2_to_v1_and_back_keeps_everything() -> None:
    v1 = to_v1(_v2())
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert "metrics" not in v1["spec"]
    assert v1["status"]["currentCPUUtilizationPercentage"] == 40
    assert set(v1["metadata"]["annotations"]) == {
        "autoscaling.alpha.kubernetes.io/metrics",
        "autoscaling.alpha.kubernetes.io/behavior",
        "autoscaling.alpha.kubernetes.io/conditions",
    }
    to_v2(v1)
    assert v1 == _v2()


async def test_a_v1_create_is_read_as_v2_and_v1() -> None:
    async with ApiServer() as server, httpx.AsyncClient(base_url=server.url) as http:
        base = "/apis/autoscaling/{}/namespaces/default/horizontalpodautoscalers"
        body = {
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": _REF,
                "maxReplicas": 5,
                "targetCPUUtilizationPercentage": 50,
            },
        }
        created = await http.post(base.format("v1"), json=body)
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["targetCPUUtilizationPercentage"] == 50
        v2 = (await http.get(base.format("v2") + "/web")).json()
        assert v2["apiVersion"] == "autoscaling/v2"
        assert v2["spec"]["metrics"] == [_CPU]
        listed = (await http.get(base.format("v1"))).json()["items"]
        assert listed[0]["spec"]["targetCPUUtilizationPercentage"] == 50

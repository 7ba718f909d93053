"""The HPA controller against the embedded server on a fake clock: metrics.k8s.io from the
pods' usage annotation, /scale of a Deployment, the sync period, the downscale stabilization
window, conditions and events with kube's texts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.horizontalpodautoscaling import HorizontalController
from kcm.informers import SharedInformerFactory
from kcm.models import format_time
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce

pytestmark = pytest.mark.anyio

NS = "default"
_MERGE = {"Content-Type": "application/merge-patch+json"}
_UP = "cpu resource utilization (percentage of request) above target"


@dataclass
class Env:
    client: ApiClient
    clock: FakeClock
    factory: SharedInformerFactory
    controller: HorizontalController
    recorder: FakeRecorder

    async def settle(self) -> None:
        await quiesce(
            [], self.factory, self.client, clock=self.clock, busy=lambda: self.controller.syncing
        )

    async def tick(self, seconds: float = 15.0) -> None:
        """Let ``seconds`` pass (the controller's passes run on the way), then settle."""
        await self.settle()
        await self.clock.advance(seconds)
        await self.settle()

    async def post(self, path: str, body: dict[str, Any]) -> None:
        response = await self.client.http.post(path, json=body)
        assert response.status_code == 201, response.text

    async def deployment(self, replicas: int) -> None:
        labels = {"app": "web"}
        template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c"}]}}
        spec = {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}
        template["spec"]["containers"][0]["image"] = "nginx"
        await self.post(
            f"/apis/apps/v1/namespaces/{NS}/deployments",
            {"metadata": {"name": "web"}, "spec": spec},
        )

    async def pod(self, name: str, cpu_usage: str) -> None:
        started = format_time(self.clock.now() - timedelta(minutes=10))
        container = {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "200m"}}}
        meta = {"name": name, "labels": {"app": "web"}, "annotations": _usage(cpu_usage)}
        await self.post(
            f"/api/v1/namespaces/{NS}/pods",
            {"metadata": meta, "spec": {"nodeName": "n1", "containers": [container]}},
        )
        ready = {"type": "Ready", "status": "True", "lastTransitionTime": started}
        status = {"phase": "Running", "startTime": started, "conditions": [ready]}
        response = await self.client.http.patch(
            f"/api/v1/namespaces/{NS}/pods/{name}/status", json={"status": status}, headers=_MERGE
        )
        assert response.status_code == 200, response.text

    async def set_usage(self, name: str, cpu_usage: str) -> None:
        response = await self.client.http.patch(
            f"/api/v1/namespaces/{NS}/pods/{name}",
            json={"metadata": {"annotations": _usage(cpu_usage)}},
            headers=_MERGE,
        )
        assert response.status_code == 200, response.text

    async def hpa(self, target: str = "web", **spec: Any) -> None:
        body = {
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 50},
                        },
                    }
                ],
                **spec,
            },
        }
        await self.post(f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers", body)

    async def replicas(self) -> int:
        response = await self.client.http.get(f"/apis/apps/v1/namespaces/{NS}/deployments/web")
        return int(response.json()["spec"]["replicas"])

    async def status(self) -> dict[str, Any]:
        path = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers/web"
        status: dict[str, Any] = (await self.client.http.get(path)).json().get("status") or {}
        return status

    async def conditions(self) -> dict[str, tuple[str, str]]:
        return {c["type"]: (c["status"], c["reason"]) for c in (await self.status())["conditions"]}


def _usage(cpu: str) -> dict[str, str]:
    return {"kcm.dev/simulate-usage": json.dumps({"cpu": cpu})}


@asynccontextmanager
async def running(**options: Any) -> AsyncIterator[Env]:
    clock = FakeClock()
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(client_config_for(server)) as client,
    ):
        factory = SharedInformerFactory(client, clock=clock)
        recorder = FakeRecorder()
        controller = HorizontalController(
            client, factory, recorder=recorder, clock=clock, **options
        )
        env = Env(client, clock, factory, controller, recorder)
        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)
            await tg.start(controller.run)
            try:
                yield env
            finally:
                tg.cancel_scope.cancel()


async def test_scales_up_then_down_after_the_stabilization_window() -> None:
    async with running(downscale_stabilization=60.0) as env:
        await env.deployment(2)
        await env.pod("web-a", "180m")
        await env.pod("web-b", "180m")
        await env.hpa()
        await env.tick()  # 90% of requests against 50%: ceil(1.8 * 2) = 4
        assert await env.replicas() == 4
        assert f"Normal SuccessfulRescale New size: 4; reason: {_UP}" in env.recorder.events
        status = await env.status()
        assert (status["currentReplicas"], status["desiredReplicas"]) == (2, 4)
        assert status["currentMetrics"] == [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {"averageUtilization": 90, "averageValue": "180m"},
                },
            }
        ]
        assert await env.conditions() == {
            "AbleToScale": ("True", "SucceededRescale"),
            "ScalingActive": ("True", "ValidMetricFound"),
            "ScalingLimited": ("False", "DesiredWithinRange"),
        }
        await env.set_usage("web-a", "20m")
        await env.set_usage("web-b", "20m")
        await env.tick()  # 10%: 1 replica proposed, held by the recent recommendation of 4
        assert await env.replicas() == 4
        assert (await env.conditions())["AbleToScale"] == ("True", "ScaleDownStabilized")
        for _ in range(4):
            await env.tick()
        assert await env.replicas() == 1
        assert "Normal SuccessfulRescale New size: 1; reason: All metrics below target" in (
            env.recorder.events
        )


async def test_within_the_tolerance_nothing_changes() -> None:
    async with running() as env:
        await env.deployment(2)
        await env.pod("web-a", "105m")
        await env.pod("web-b", "105m")
        await env.hpa()
        await env.tick()
        assert await env.replicas() == 2
        assert await env.conditions() == {
            "AbleToScale": ("True", "ReadyForNewScale"),
            "ScalingActive": ("True", "ValidMetricFound"),
            "ScalingLimited": ("False", "DesiredWithinRange"),
        }
        assert not any("SuccessfulRescale" in e for e in env.recorder.events)


async def test_min_and_max_replicas_apply_before_metrics() -> None:
    async with running() as env:
        await env.deployment(9)
        await env.hpa()
        await env.tick()
        assert await env.replicas() == 5
        reason = "Current number of replicas above Spec.MaxReplicas"
        assert f"Normal SuccessfulRescale New size: 5; reason: {reason}" in env.recorder.events


async def test_failures_set_conditions_and_events() -> None:
    async with running() as env:
        await env.hpa(target="missing")
        await env.tick()
        assert (await env.conditions())["AbleToScale"] == ("False", "FailedGetScale")
        assert (
            'Warning FailedGetScale deployments/scale.apps "missing" not found'
        )  # kube's text in env.recorder.events
        await env.deployment(2)  # no pods: no metrics
        await env.client.http.delete(
            f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers/web"
        )
        await env.hpa()
        await env.tick()
        conditions = await env.conditions()
        assert conditions["ScalingActive"] == ("False", "FailedGetResourceMetric")
        assert (
            "Warning FailedGetResourceMetric failed to get cpu utilization: unable to get "
            "metrics for resource cpu: no metrics returned from resource metrics API"
        ) in env.recorder.events
        assert any(
            e.startswith(
                "Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1)"
            )
            for e in env.recorder.events
        )


async def test_without_an_hpa_no_pass_is_due_until_one_is_added() -> None:
    """Nothing is queued while there is nothing to scale (what an idle controller manager
    looks like in its queue metrics); the first HPA puts the passes back on their beat."""
    async with running() as env:
        await env.tick(50)
        assert env.controller.passes == 1  # the one at start; none at 15, 30 or 45
        await env.deployment(2)
        await env.hpa()
        await env.settle()
        assert env.controller.passes == 1  # the next is due on the beat, at 60
        await env.tick(15)
        assert env.controller.passes == 2
        assert "AbleToScale" in await env.conditions()

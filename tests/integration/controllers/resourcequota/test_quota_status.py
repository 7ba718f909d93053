"""The resourcequota controller against the embedded server on a fake clock: status.hard and
status.used per kind and scope, replenishment on delete / phase / type change, the priority
queue for a changed spec.hard, and the full recalculation every resync period
(the reference's scenarios for this controller)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.resourcequota import ResourceQuotaController
from kcm.informers import SharedInformerFactory
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce

pytestmark = pytest.mark.anyio

NS = "default"


@dataclass
class Env:
    client: ApiClient
    clock: FakeClock
    factory: SharedInformerFactory
    controller: ResourceQuotaController

    async def settle(self) -> None:
        await quiesce(
            [self.controller.controller, self.controller.priority],
            self.factory,
            self.client,
            clock=self.clock,
        )

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await self.client.http.post(path, json=body)
        assert response.status_code == 201, response.text
        await self.settle()
        result: dict[str, Any] = response.json()
        return result

    async def pod(self, name: str, requests: dict[str, str] | None = None) -> None:
        resources = {"requests": requests, "limits": requests} if requests else {}
        container = {"name": "c", "image": "nginx", "resources": resources}
        await self.post(
            f"/api/v1/namespaces/{NS}/pods",
            {"metadata": {"name": name}, "spec": {"containers": [container]}},
        )

    async def quota(self, hard: dict[str, str], name: str = "q", **spec: Any) -> None:
        await self.post(
            f"/api/v1/namespaces/{NS}/resourcequotas",
            {"metadata": {"name": name}, "spec": {"hard": hard, **spec}},
        )

    async def status(self, name: str = "q") -> dict[str, Any]:
        response = await self.client.http.get(f"/api/v1/namespaces/{NS}/resourcequotas/{name}")
        status: dict[str, Any] = response.json().get("status") or {}
        return status

    async def used(self, name: str = "q") -> dict[str, str]:
        return dict((await self.status(name)).get("used") or {})


@asynccontextmanager
async def running(*, resync_period: float = 300.0) -> AsyncIterator[Env]:
    clock = FakeClock()
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(client_config_for(server)) as client,
    ):
        factory = SharedInformerFactory(client, clock=clock)
        controller = ResourceQuotaController(
            client, factory, recorder=FakeRecorder(), clock=clock, resync_period=resync_period
        )
        env = Env(client, clock, factory, controller)
        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)
            await tg.start(controller.run)
            try:
                yield env
            finally:
                tg.cancel_scope.cancel()


async def test_counts_pods_and_replenishes_on_phase_and_delete() -> None:
    async with running() as env:
        await env.pod("a")
        await env.pod("b")
        await env.quota({"pods": "10", "count/pods": "10"})
        assert await env.status() == {
            "hard": {"count/pods": "10", "pods": "10"},
            "used": {"count/pods": "2", "pods": "2"},
        }
        await env.client.http.patch(
            f"/api/v1/namespaces/{NS}/pods/a/status",
            json={"status": {"phase": "Succeeded"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        await env.settle()
        # a finished pod no longer counts as a pod, but still as an object
        assert await env.used() == {"count/pods": "2", "pods": "1"}
        await env.client.http.delete(
            f"/api/v1/namespaces/{NS}/pods/b", params={"gracePeriodSeconds": "0"}
        )
        await env.settle()
        assert await env.used() == {"count/pods": "1", "pods": "0"}


async def test_compute_resources_scopes_and_counted_kinds() -> None:
    async with running() as env:
        await env.pod("small", {"cpu": "100m", "memory": "64Mi"})
        await env.pod("big", {"cpu": "200m", "memory": "1Gi"})
        await env.pod("none")
        await env.post(f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "cm"}})
        await env.quota(
            {
                "requests.cpu": "1",
                "limits.memory": "4Gi",
                "configmaps": "5",
                "count/configmaps": "5",
                "count/deployments.apps": "2",
            }
        )
        assert await env.used() == {
            "configmaps": "1",
            "count/configmaps": "1",
            "count/deployments.apps": "0",
            "limits.memory": "1088Mi",
            "requests.cpu": "300m",
        }
        await env.quota({"pods": "5"}, name="besteffort", scopes=["BestEffort"])
        assert await env.used("besteffort") == {"pods": "1"}


async def test_a_service_changing_type_is_recounted() -> None:
    async with running() as env:
        await env.post(
            f"/api/v1/namespaces/{NS}/services",
            {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}},
        )
        await env.quota({"services.loadbalancers": "2", "services": "3"})
        # the default namespace's "kubernetes" Service counts too
        assert await env.used() == {"services": "2", "services.loadbalancers": "0"}
        await env.client.http.patch(
            f"/api/v1/namespaces/{NS}/services/s",
            json={"spec": {"type": "LoadBalancer"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        await env.settle()
        assert await env.used() == {"services": "2", "services.loadbalancers": "1"}


async def test_a_changed_hard_limit_is_recalculated_at_once() -> None:
    async with running() as env:
        await env.pod("a")
        await env.quota({"pods": "3"})
        await env.client.http.patch(
            f"/api/v1/namespaces/{NS}/resourcequotas/q",
            json={"spec": {"hard": {"pods": "4", "secrets": "9"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        await env.settle()
        assert await env.status() == {
            "hard": {"pods": "4", "secrets": "9"},
            "used": {"pods": "1", "secrets": "0"},
        }
        assert env.controller.priority.reconcile_counts["success"] >= 2


async def test_a_wrong_usage_is_corrected_by_the_periodic_resync() -> None:
    async with running(resync_period=60) as env:
        await env.pod("a")
        await env.quota({"pods": "3"})
        response = await env.client.http.get(f"/api/v1/namespaces/{NS}/resourcequotas/q")
        body = response.json()
        body["status"]["used"] = {"pods": "3"}
        await env.client.http.put(f"/api/v1/namespaces/{NS}/resourcequotas/q/status", json=body)
        await env.settle()
        assert await env.used() == {"pods": "3"}  # nothing triggered a recalculation yet
        await env.clock.advance(60)
        await env.settle()
        assert await env.used() == {"pods": "1"}


async def test_counted_kinds_share_the_informers_other_controllers_hold() -> None:
    """ReplicationControllers and ResourceQuotas are counted from the whole-object informers
    the RC manager, disruption and this controller hold (one watch per kind, as kube's typed
    informers); Secrets from the whole-object informer another controller asked for, even
    after this one was made (the token controller's); ConfigMaps, which nobody else watches
    whole, from a metadata-only one."""
    from kcm.models import PartialObjectMetadata
    from kcm.models.core_v1 import Secret

    clock = FakeClock()
    async with ApiServer(clock=clock) as server, ApiClient(client_config_for(server)) as client:
        factory = SharedInformerFactory(client, clock=clock)
        controller = ResourceQuotaController(client, factory, recorder=FakeRecorder(), clock=clock)
        factory.informer_for(Secret)  # a controller wired after this one
        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)
            await tg.start(controller.run)
            tg.cancel_scope.cancel()
        watched: dict[str, list[str]] = {}
        for key in factory.informers():
            plural = key.resource.rsplit("/", 1)[1]
            kind = "metadata" if key.model is PartialObjectMetadata else "whole"
            watched.setdefault(plural, []).append(kind)
    assert watched["replicationcontrollers"] == ["whole"]
    assert watched["resourcequotas"] == ["whole"]
    assert watched["secrets"] == ["whole"]
    assert watched["configmaps"] == ["metadata"]

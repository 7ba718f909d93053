"""Helpers for the disruption controller's integration tests: the controller against the
embedded API server, both on one fake clock, with the test playing the workload controllers
(pods are created with their owner references) and the kubelet."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.disruption import DisruptionController
from kcm.informers import SharedInformerFactory
from kcm.models import resource_info_for
from kcm.models.core_v1 import Pod
from kcm.models.meta_v1 import LabelSelector, ObjectMeta, OwnerReference
from kcm.models.policy_v1 import PodDisruptionBudget, PodDisruptionBudgetSpec
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce
from tests.helpers.controller_stop import stop_controllers

NS = "default"


def budget(
    name: str = "pdb",
    *,
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    labels: dict[str, str] | None = None,
    selector: LabelSelector | None = None,
) -> PodDisruptionBudget:
    if selector is None:
        selector = LabelSelector(match_labels=labels or {"app": "web"})
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace=NS),
        spec=PodDisruptionBudgetSpec(
            min_available=min_available, max_unavailable=max_unavailable, selector=selector
        ),
    )


@dataclass
class Env:
    server: ApiServer
    client: ApiClient
    clock: FakeClock
    recorder: FakeRecorder
    factory: SharedInformerFactory
    controller: DisruptionController

    async def settle(self) -> None:
        await quiesce([self.controller.controller], self.factory, self.client, clock=self.clock)

    async def advance(self, seconds: float) -> None:
        await self.clock.advance(seconds)
        await self.settle()

    async def create(self, obj: Any) -> Any:
        created = await self.client.api(type(obj), NS).create(obj)
        await self.settle()
        return created

    async def owned_pods(
        self,
        owner: Any,
        count: int,
        *,
        ready: bool = True,
        labels: dict[str, str] | None = None,
        prefix: str | None = None,
        node: str | None = "node-1",
    ) -> list[str]:
        """``count`` pods controlled by ``owner`` (a created object), Running and Ready."""
        info = resource_info_for(type(owner))
        ref = OwnerReference(
            api_version=info.api_version,
            kind=info.kind,
            name=owner.metadata.name,
            uid=owner.metadata.uid,
            controller=True,
        )
        names = []
        for i in range(count):
            name = f"{prefix or owner.metadata.name}-{i}"
            await self.pod(name, labels=labels, owner=ref, ready=ready, node=node)
            names.append(name)
        await self.settle()
        return names

    async def pod(
        self,
        name: str,
        *,
        labels: dict[str, str] | None = None,
        owner: OwnerReference | None = None,
        ready: bool = True,
        node: str | None = "node-1",
    ) -> None:
        body: dict[str, Any] = {
            "metadata": {"name": name, "labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]},
        }
        if node:
            body["spec"]["nodeName"] = node
        if owner is not None:
            body["metadata"]["ownerReferences"] = [
                {
                    "apiVersion": owner.api_version,
                    "kind": owner.kind,
                    "name": owner.name,
                    "uid": owner.uid,
                    "controller": True,
                }
            ]
        await self.client.http.post(f"/api/v1/namespaces/{NS}/pods", json=body)
        await self.set_ready(name, ready)

    async def set_ready(self, name: str, ready: bool = True) -> None:
        now = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        status = "True" if ready else "False"
        await self.client.api(Pod, NS).patch_status(
            name,
            {
                "status": {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": status, "lastTransitionTime": now}],
                }
            },
        )
        await self.settle()

    async def get(self, name: str = "pdb") -> PodDisruptionBudget:
        return await self.client.api(PodDisruptionBudget, NS).get(name)

    async def status(self, name: str = "pdb") -> dict[str, Any]:
        response = await self.client.http.get(
            f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/{name}"
        )
        status: dict[str, Any] = response.json().get("status") or {}
        return status

    async def numbers(self, name: str = "pdb") -> tuple[int, int, int, int]:
        """(expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed)."""
        s = await self.status(name)
        return (
            s["expectedPods"],
            s["desiredHealthy"],
            s["currentHealthy"],
            s["disruptionsAllowed"],
        )

    async def evict(self, name: str, *, query: str = "", **extra: Any) -> httpx.Response:
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
        body.update(extra)
        response = await self.client.http.post(
            f"/api/v1/namespaces/{NS}/pods/{name}/eviction{query}", json=body
        )
        await self.settle()
        return response

    def events(self, reason: str | None = None) -> list[str]:
        return [e for e in self.recorder.events if reason is None or e.split(" ")[1] == reason]


@asynccontextmanager
async def running() -> AsyncIterator[Env]:
    """An API server on a FakeClock and the disruption controller running against it."""
    clock = FakeClock()
    recorder = FakeRecorder()
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(client_config_for(server)) as client,
    ):
        factory = SharedInformerFactory(client, clock=clock)
        controller = DisruptionController(client, factory, recorder=recorder, clock=clock)
        env = Env(server, client, clock, recorder, factory, controller)
        stopped = anyio.Event()

        async def run(*, task_status: Any) -> None:
            try:
                await controller.run(task_status=task_status)
            finally:
                stopped.set()

        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)
            await tg.start(run)
            try:
                yield env
            finally:
                await stop_controllers(tg.cancel_scope, stopped)

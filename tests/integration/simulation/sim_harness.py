"""Shared helpers of the simulation integration tests: a running SimulatedCluster on the
embedded API server with a fake clock, and pod builders."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models import Container, ObjectMeta, Pod, PodSpec, ResourceRequirements
from kcm.simulation import SimulatedCluster, SimulationConfig
from kcm.testing import FakeClock, client_config_for
from tests.helpers.controller_quiesce import quiesce


@dataclass
class Sim:
    client: ApiClient
    pods: Api[Pod]
    clock: FakeClock
    cluster: SimulatedCluster
    factory: SharedInformerFactory

    async def quiesce(self) -> None:
        """Wait until the scheduler and kubelet have acted on everything due so far (no fake
        time passes): before a negative check such as "still Pending"."""
        controllers = [self.cluster.scheduler.controller, self.cluster.kubelet.controller]
        await quiesce(controllers, self.factory, self.client, clock=self.clock)


@asynccontextmanager
async def running_sim(server: ApiServer, **config: Any) -> AsyncIterator[Sim]:
    clock = FakeClock()
    settings = SimulationConfig(**{"nodes": 3, **config})
    async with ApiClient(client_config_for(server)) as client:
        factory = SharedInformerFactory(client, clock=clock)
        cluster = SimulatedCluster(client, factory, config=settings, clock=clock)
        async with anyio.create_task_group() as tg:
            tg.start_soon(factory.run)
            await tg.start(cluster.run)
            yield Sim(client, client.api(Pod, namespace="default"), clock, cluster, factory)
            tg.cancel_scope.cancel()


def pod(
    name: str,
    *,
    restart_policy: str | None = None,
    annotations: dict[str, str] | None = None,
    cpu: str | None = None,
    **spec: Any,
) -> Pod:
    resources = ResourceRequirements(requests={"cpu": cpu}) if cpu else None
    return Pod(
        metadata=ObjectMeta(name=name, annotations=annotations),
        spec=PodSpec(
            containers=[Container(name="main", image="busybox", resources=resources)],
            restart_policy=restart_policy,
            **spec,
        ),
    )


def condition(p: Pod, kind: str) -> str | None:
    for c in (p.status.conditions if p.status else None) or []:
        if c.type == kind:
            return c.status
    return None


def phase(p: Pod) -> str | None:
    return p.status.phase if p.status else None

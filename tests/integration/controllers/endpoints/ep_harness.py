"""Shared helpers of the Endpoints, EndpointSlice and mirroring integration tests.

The embedded API server, the informers and the controllers run on one FakeClock; tests play
the kubelet (pod IPs and readiness through ``pods/status``) and the node registrar.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import (
    Container,
    ContainerPort,
    Endpoints,
    Node,
    NodeSpec,
    Pod,
    PodSpec,
    Service,
    ServicePort,
    ServiceSpec,
)
from kcm.models.discovery_v1 import EndpointSlice
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce
from tests.helpers.controller_stop import stop_controllers

NS = "default"

Maker = Callable[[ApiClient, SharedInformerFactory, FakeClock, FakeRecorder], Any]


@dataclass
class Env:
    server: ApiServer
    client: ApiClient
    clock: FakeClock
    recorder: FakeRecorder
    factory: SharedInformerFactory
    built: list[Any]

    @property
    def services(self) -> Api[Service]:
        return self.client.api(Service, NS)

    @property
    def pods(self) -> Api[Pod]:
        return self.client.api(Pod, NS)

    @property
    def endpoints(self) -> Api[Endpoints]:
        return self.client.api(Endpoints, NS)

    @property
    def slices(self) -> Api[EndpointSlice]:
        return self.client.api(EndpointSlice, NS)

    async def quiesce(self) -> None:
        """Wait until the controllers have acted on everything so far (no fake time passes)."""
        await quiesce(
            [b.controller for b in self.built], self.factory, self.client, clock=self.clock
        )

    async def get_endpoints(self, name: str) -> Endpoints | None:
        items = (await self.endpoints.list()).items
        return next((e for e in items if e.metadata.name == name), None)

    async def slices_of(self, service: str) -> list[EndpointSlice]:
        items = (
            await self.slices.list(label_selector=f"kubernetes.io/service-name={service}")
        ).items
        return sorted(items, key=lambda s: str(s.metadata.name))

    async def node(self, name: str, *, zone: str | None = None) -> Node:
        labels = {"kubernetes.io/hostname": name}
        if zone:
            labels["topology.kubernetes.io/zone"] = zone
        return await self.client.api(Node).create(
            Node(metadata=ObjectMeta(name=name, labels=labels), spec=NodeSpec())
        )

    async def service(
        self,
        name: str,
        *,
        selector: dict[str, str] | None = None,
        ports: list[ServicePort] | None = None,
        **spec: Any,
    ) -> Service:
        if ports is None:
            ports = [ServicePort(port=80, target_port=8080, protocol="TCP")]
        return await self.services.create(
            Service(
                metadata=ObjectMeta(name=name, namespace=NS, labels=spec.pop("labels", None)),
                spec=ServiceSpec(selector=selector, ports=ports, **spec),
            )
        )

    async def pod(
        self,
        name: str,
        ip: str | None = "10.0.0.1",
        *,
        labels: dict[str, str] | None = None,
        ready: bool = True,
        node: str = "n1",
        ports: list[ContainerPort] | None = None,
        phase: str = "Running",
        ips: list[str] | None = None,
        **spec: Any,
    ) -> Pod:
        """Create a pod bound to ``node`` and give it the status a kubelet would write."""
        pod = await self.pods.create(
            Pod(
                metadata=ObjectMeta(
                    name=name,
                    namespace=NS,
                    labels=labels if labels is not None else {"app": "web"},
                    finalizers=spec.pop("finalizers", None),
                ),
                spec=PodSpec(
                    node_name=node,
                    containers=[Container(name="c", image="nginx", ports=ports)],
                    **spec,
                ),
            )
        )
        if ip is None:
            return pod
        return await self.set_status(name, ip=ip, ready=ready, phase=phase, ips=ips)

    async def set_status(
        self,
        name: str,
        *,
        ip: str = "10.0.0.1",
        ready: bool = True,
        phase: str = "Running",
        ips: list[str] | None = None,
        since: str | None = None,
    ) -> Pod:
        when = since or self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        status = {
            "phase": phase,
            "podIP": ip,
            "podIPs": [{"ip": i} for i in (ips if ips is not None else [ip])],
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": when,
                }
            ],
        }
        return await self.pods.patch_status(name, {"status": status})


@asynccontextmanager
async def running(
    *makers: Maker, setup: Callable[[Env], Awaitable[None]] | None = None
) -> AsyncIterator[Env]:
    """An ApiServer, client and factory on one FakeClock, each maker's controller running
    (built and started after ``setup``, which sees the server only)."""
    clock = FakeClock()
    recorder = FakeRecorder()
    async with ApiServer(clock=clock) as server, ApiClient(client_config_for(server)) as client:
        factory = SharedInformerFactory(client, clock=clock)
        env = Env(server, client, clock, recorder, factory, [])
        if setup is not None:
            await setup(env)
        built = [make(client, factory, clock, recorder) for make in makers]
        env.built = built
        stopped = [anyio.Event() for _ in built]

        async def run(runnable: Any, done: anyio.Event, *, task_status: Any) -> None:
            try:
                await runnable.run(task_status=task_status)
            finally:
                done.set()

        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)
            for runnable, done in zip(built, stopped, strict=True):
                await tg.start(run, runnable, done)
            try:
                yield env
            finally:
                await stop_controllers(tg.cancel_scope, *stopped)


def dual_stack(monkeypatch: Any) -> None:
    """Let the embedded server (a single-stack IPv4 cluster, as kube-apiserver's default,
    where an IPv6 or dual-stack Service is a 422) take a dual-stack cluster's Service IP
    families: its IP family checks are skipped, the families stay as the client sent them."""
    from kcm.apiserver._strategy.core import services

    monkeypatch.setattr(services, "_init_ip_families", lambda spec, name: None)

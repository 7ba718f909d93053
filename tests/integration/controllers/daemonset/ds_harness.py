"""Helpers of the DaemonSet controller's integration tests.

Everything runs on one FakeClock (server timestamps, informers, the controller), so the
failed-pod backoff and minReadySeconds happen exactly when a test advances time. Nodes are
plain Node objects the test labels, taints and cordons; the test plays the scheduler
(:meth:`Env.bind`) and the kubelet (:meth:`Env.set_ready`, :meth:`Env.set_phase`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.controllers.daemonset import DaemonSetController, target_node_name
from kcm.informers import SharedInformerFactory
from kcm.models import Binding, ObjectReference, encode
from kcm.models.apps_v1 import (
    ControllerRevision,
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kcm.models.core_v1 import (
    Container,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    Pod,
    PodSpec,
    PodTemplateSpec,
    Taint,
)
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce
from tests.helpers.controller_stop import stop_controllers

NS = "default"
LABELS = {"app": "agent"}


def node(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    taints: list[Taint] | None = None,
    unschedulable: bool | None = None,
    ready: bool = True,
) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, labels={"kubernetes.io/hostname": name, **(labels or {})}),
        spec=NodeSpec(taints=taints, unschedulable=unschedulable),
        status=NodeStatus(
            conditions=[NodeCondition(type="Ready", status="True" if ready else "False")]
        ),
    )


def daemon_set(
    name: str = "agent",
    *,
    image: str = "agent:1",
    strategy: str | None = "RollingUpdate",
    max_unavailable: int | str | None = 1,
    max_surge: int | str | None = 0,
    min_ready_seconds: int | None = None,
    revision_history_limit: int | None = 10,
    labels: dict[str, str] | None = None,
    **pod_spec: Any,
) -> DaemonSet:
    labels = labels or dict(LABELS)
    rolling = (
        RollingUpdateDaemonSet(max_unavailable=max_unavailable, max_surge=max_surge)
        if strategy == "RollingUpdate"
        else None
    )
    return DaemonSet(
        metadata=ObjectMeta(name=name, namespace=NS),
        spec=DaemonSetSpec(
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="main", image=image)], **pod_spec),
            ),
            update_strategy=(
                DaemonSetUpdateStrategy(type=strategy, rolling_update=rolling) if strategy else None
            ),
            min_ready_seconds=min_ready_seconds,
            revision_history_limit=revision_history_limit,
        ),
    )


@dataclass
class Env:
    server: ApiServer
    client: ApiClient
    clock: FakeClock
    recorder: FakeRecorder
    factory: SharedInformerFactory
    controller: DaemonSetController | None = None
    requests: list[tuple[str, str]] = field(default_factory=list)
    transport: Any = None

    def fail_pod_creates(self, n: int) -> None:
        """Answer the next ``n`` pod creates with 403 Forbidden (a quota)."""
        self.transport.fail_pod_creates = n

    @property
    def pods(self) -> Api[Pod]:
        return self.client.api(Pod, NS)

    @property
    def nodes(self) -> Api[Node]:
        return self.client.api(Node)

    @property
    def daemon_sets(self) -> Api[DaemonSet]:
        return self.client.api(DaemonSet, NS)

    @property
    def revisions(self) -> Api[ControllerRevision]:
        return self.client.api(ControllerRevision, NS)

    async def quiesce(self) -> None:
        """Wait until the controller acted on everything so far (no fake time passes)."""
        assert self.controller is not None
        await quiesce([self.controller.controller], self.factory, self.client, clock=self.clock)

    async def advance(self, seconds: float) -> None:
        await self.clock.advance(seconds)
        await self.quiesce()

    async def live_pods(self, *, include_deleting: bool = False) -> list[Pod]:
        """The DaemonSet pods, oldest name first; not deleting unless asked."""
        pods = (await self.pods.list(label_selector="app=agent")).items
        if not include_deleting:
            pods = [p for p in pods if p.metadata.deletion_timestamp is None]
        return sorted(pods, key=lambda p: str(p.metadata.name))

    async def pods_by_node(self) -> dict[str, list[Pod]]:
        out: dict[str, list[Pod]] = {}
        for pod in await self.live_pods():
            out.setdefault(target_node_name(pod) or "", []).append(pod)
        return out

    async def ds(self, name: str = "agent") -> DaemonSet:
        return await self.daemon_sets.get(name)

    async def bind(self, pod: Pod) -> None:
        """Play the scheduler: bind ``pod`` to the node its affinity names."""
        binding = Binding(
            metadata=ObjectMeta(name=pod.metadata.name),
            target=ObjectReference(kind="Node", name=target_node_name(pod)),
        )
        await self.client.request(
            "POST",
            f"/api/v1/namespaces/{NS}/pods/{pod.metadata.name}/binding",
            content=encode(binding),
            headers={"Content-Type": "application/json"},
        )

    async def set_ready(self, pod: Pod, *, ready: bool = True) -> None:
        """Play the kubelet: Running, Ready (or not) since now."""
        at = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        status = "True" if ready else "False"
        await self.pods.patch_status(
            str(pod.metadata.name),
            {
                "status": {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": status, "lastTransitionTime": at}],
                }
            },
        )

    async def set_phase(self, pod: Pod, phase: str) -> None:
        await self.pods.patch_status(str(pod.metadata.name), {"status": {"phase": phase}})

    async def make_all_ready(self) -> None:
        for pod in await self.live_pods():
            await self.set_ready(pod)
        await self.quiesce()

    async def remove(self, pod: Pod) -> None:
        """Play the kubelet finishing a deletion."""
        await self.pods.delete(str(pod.metadata.name), grace_period_seconds=0)

    def events(self, reason: str) -> list[str]:
        """Messages of the recorded events with ``reason``."""
        out = []
        for event in self.recorder.events:
            _type, got, message = event.split(" ", 2)
            if got == reason:
                out.append(message)
        return out


class _Log(httpx.AsyncBaseTransport):
    """Logs requests; answers the next ``env.fail_pod_creates`` pod creates with a 403."""

    def __init__(self, log: list[tuple[str, str]]) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._log = log
        self.fail_pod_creates = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._log.append((request.method, request.url.path))
        creating = request.method == "POST" and request.url.path.endswith("/pods")
        if creating and self.fail_pod_creates > 0:
            self.fail_pod_creates -= 1
            await request.aread()
            return httpx.Response(
                403,
                json={
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "Forbidden",
                    "message": "pods is forbidden: exceeded quota: compute",
                    "code": 403,
                },
            )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def running(*nodes: Node, **controller_kwargs: Any) -> AsyncIterator[Env]:
    """An API server on a FakeClock with ``nodes``, and the DaemonSet controller running."""
    clock = FakeClock()
    recorder = FakeRecorder()
    requests: list[tuple[str, str]] = []
    transport = _Log(requests)
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(client_config_for(server), transport=transport) as client,
    ):
        for n in nodes:
            await client.api(Node).create(n)
        factory = SharedInformerFactory(client, clock=clock)
        controller = DaemonSetController(
            client, factory, recorder=recorder, clock=clock, **controller_kwargs
        )
        env = Env(server, client, clock, recorder, factory, controller, requests, transport)
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

"""Helpers for the StatefulSet controller's integration tests: the controller against the
embedded API server on a fake clock, with the test playing the kubelet."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import msgspec
from prometheus_client import CollectorRegistry

from kcm.apiserver import ApiServer
from kcm.client import ApiClient, PatchType
from kcm.controllers.statefulset import StatefulSetController
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import (
    ControllerRevision,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetSpec,
    StatefulSetUpdateStrategy,
)
from kcm.models.core_v1 import (
    Container,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    Pod,
    PodSpec,
    PodTemplateSpec,
    VolumeResourceRequirements,
)
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce
from tests.helpers.controller_stop import stop_controllers

NS = "default"
LABELS = {"app": "web"}


def make_set(
    name: str = "web",
    *,
    replicas: int = 3,
    image: str = "nginx:1",
    policy: str | None = None,
    strategy: str | None = None,
    partition: int | None = None,
    claims: tuple[str, ...] = (),
    min_ready: int | None = None,
    history: int | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> StatefulSet:
    """A StatefulSet as a user writes it (the embedded server defaults nothing of it)."""
    labels = labels or {"app": name}
    rolling = None
    if partition is not None:
        rolling = RollingUpdateStatefulSetStrategy(partition=partition)
    update = None
    if strategy is not None or rolling is not None:
        update = StatefulSetUpdateStrategy(type=strategy or "RollingUpdate", rolling_update=rolling)
    templates = [
        PersistentVolumeClaim(
            metadata=ObjectMeta(name=claim),
            spec=PersistentVolumeClaimSpec(
                access_modes=["ReadWriteOnce"],
                resources=VolumeResourceRequirements(requests={"storage": "1Gi"}),
            ),
        )
        for claim in claims
    ]
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace=NS, annotations=annotations),
        spec=StatefulSetSpec(
            replicas=replicas,
            service_name=name,
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="app", image=image)]),
            ),
            pod_management_policy=policy,
            update_strategy=update,
            volume_claim_templates=templates or None,
            min_ready_seconds=min_ready,
            revision_history_limit=history,
        ),
    )


def names(objects: list[Any]) -> list[str]:
    return sorted(str(o.metadata.name) for o in objects)


@dataclass
class Tap(httpx.AsyncBaseTransport):
    """Logs every write (method, path) between the controller and the server."""

    inner: httpx.AsyncBaseTransport = field(default_factory=httpx.AsyncHTTPTransport)
    writes: list[tuple[str, str]] = field(default_factory=list)
    fail: dict[tuple[str, str], tuple[int, dict[str, Any]]] = field(default_factory=dict)
    """(method, path suffix) -> the failure to answer instead, once."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method != "GET":
            self.writes.append((request.method, path))
        for (method, suffix), failure in list(self.fail.items()):
            if request.method == method and path.endswith(suffix):
                del self.fail[(method, suffix)]
                await request.aread()
                return httpx.Response(failure[0], json=failure[1])
        return await self.inner.handle_async_request(request)

    def pod_writes(self, method: str) -> list[str]:
        return [p.rsplit("/", 1)[-1] for m, p in self.writes if m == method and "/pods" in p]

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Cluster:
    """The controller under test and the test's own client (the user and the kubelet)."""

    client: ApiClient
    controller: StatefulSetController
    recorder: FakeRecorder
    tap: Tap
    factory: SharedInformerFactory
    clock: FakeClock

    async def settle(self) -> None:
        """Until the controller has acted on everything so far."""
        await quiesce([self.controller.controller], self.factory, self.client, clock=self.clock)

    async def advance(self, seconds: float) -> None:
        await self.clock.advance(seconds)
        await self.settle()

    # -- the user --------------------------------------------------------------------------

    async def create(self, sts: StatefulSet) -> StatefulSet:
        created = await self.client.api(StatefulSet, NS).create(sts)
        await self.settle()
        return created

    async def patch_set(self, name: str, body: dict[str, Any]) -> StatefulSet:
        patched = await self.client.api(StatefulSet, NS).patch(
            name, body, patch_type=PatchType.STRATEGIC
        )
        await self.settle()
        return patched

    async def set_image(self, name: str, image: str) -> StatefulSet:
        body = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}
        return await self.patch_set(name, body)

    async def delete_pod(self, name: str) -> None:
        await self.client.api(Pod, NS).delete(name, grace_period_seconds=0)
        await self.settle()

    # -- reading ---------------------------------------------------------------------------

    async def get(self, name: str = "web") -> StatefulSet:
        return await self.client.api(StatefulSet, NS).get(name)

    async def pods(self) -> list[Pod]:
        return sorted(
            (await self.client.api(Pod, NS).list()).items, key=lambda p: str(p.metadata.name)
        )

    async def pod(self, name: str) -> Pod:
        return await self.client.api(Pod, NS).get(name)

    async def pod_names(self) -> list[str]:
        return names(await self.pods())

    async def claims(self) -> list[PersistentVolumeClaim]:
        return (await self.client.api(PersistentVolumeClaim, NS).list()).items

    async def revisions(self) -> list[ControllerRevision]:
        return (await self.client.api(ControllerRevision, NS).list()).items

    # -- the kubelet ----------------------------------------------------------------------

    async def make_ready(self, *names: str, ready: bool = True) -> None:
        """Phase Running and Ready (since now, whole seconds as the API keeps them)."""
        now = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        for name in names:
            await self.client.api(Pod, NS).patch_status(
                name,
                {
                    "status": {
                        "phase": "Running",
                        "conditions": [
                            {
                                "type": "Ready",
                                "status": "True" if ready else "False",
                                "lastTransitionTime": now,
                            }
                        ],
                    }
                },
            )
        await self.settle()

    async def make_all_ready(self) -> None:
        """Every pod not yet Running and Ready becomes so (one round)."""
        pending = [
            str(p.metadata.name)
            for p in await self.pods()
            if not (p.status and p.status.phase == "Running" and _ready(p))
            and p.metadata.deletion_timestamp is None
        ]
        await self.make_ready(*pending)

    async def set_phase(self, name: str, phase: str) -> None:
        await self.client.api(Pod, NS).patch_status(name, {"status": {"phase": phase}})
        await self.settle()

    async def roll_out(self, *, rounds: int = 20) -> None:
        """Keep making pods ready until nothing changes."""
        for _ in range(rounds):
            before = [(p.metadata.name, p.metadata.uid) for p in await self.pods()]
            await self.make_all_ready()
            after = [(p.metadata.name, p.metadata.uid) for p in await self.pods()]
            if before == after and all(_ready(p) for p in await self.pods()):
                return
        raise AssertionError("the StatefulSet did not settle")

    def events(self, reason: str | None = None) -> list[str]:
        """The recorded events as ``"<type> <reason> <message>"``, of one reason or all."""
        return [e for e in self.recorder.events if reason is None or e.split(" ")[1] == reason]


def _ready(pod: Pod) -> bool:
    return any(
        c.type == "Ready" and c.status == "True"
        for c in (pod.status.conditions if pod.status else None) or ()
    )


@asynccontextmanager
async def running(server: ApiServer, **kwargs: Any) -> AsyncIterator[Cluster]:
    """The StatefulSet controller on its own tapped client, with a running informer factory
    and a fake clock, plus an untapped client for the test."""
    tap = Tap()
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    recorder = FakeRecorder()
    clock = FakeClock()
    async with (
        ApiClient(config, transport=tap) as client,
        ApiClient(config) as user,
        anyio.create_task_group() as tg,
    ):
        factory = SharedInformerFactory(client)
        controller = StatefulSetController(
            client,
            factory,
            recorder=recorder,
            clock=clock,
            registry=CollectorRegistry(),
            **kwargs,
        )
        scope = anyio.CancelScope()
        stopped = anyio.Event()

        async def run_controller(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            try:
                with scope:
                    await controller.run(task_status=task_status)
            finally:
                stopped.set()

        with anyio.fail_after(10):
            await tg.start(factory.run)
            await tg.start(run_controller)
        try:
            yield Cluster(user, controller, recorder, tap, factory, clock)
        finally:
            await stop_controllers(scope, stopped)
            tg.cancel_scope.cancel()

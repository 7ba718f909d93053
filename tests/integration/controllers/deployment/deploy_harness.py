"""Helpers for the Deployment controller's integration tests: a running controller against
the embedded API server, and a fake ReplicaSet controller + kubelet that records every
ReplicaSet change it observes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import msgspec
from anyio.abc import TaskStatus

from kcm.apiserver import ApiServer
from kcm.client import ApiClient, PatchType
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllers.deployment import DeploymentController
from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import (
    Deployment,
    DeploymentSpec,
    DeploymentStrategy,
    ReplicaSet,
    ReplicaSetStatus,
    RollingUpdateDeployment,
)
from kcm.models.core_v1 import Container, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for
from tests.helpers.controller_quiesce import quiesce
from tests.helpers.held_stream import HeldStream

NS = "default"


def make_deployment(
    name: str = "web",
    *,
    replicas: int = 3,
    image: str = "nginx:1",
    strategy: str = "RollingUpdate",
    max_surge: int | str | None = None,
    max_unavailable: int | str | None = None,
    paused: bool | None = None,
    deadline: int | None = None,
    history: int | None = None,
    selector: dict[str, str] | None = None,
) -> Deployment:
    labels = {"app": name}
    rolling = None
    if strategy == "RollingUpdate" and (max_surge is not None or max_unavailable is not None):
        rolling = RollingUpdateDeployment(max_surge=max_surge, max_unavailable=max_unavailable)
    return Deployment(
        metadata=ObjectMeta(name=name, namespace=NS),
        spec=DeploymentSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=labels if selector is None else selector),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="app", image=image)]),
            ),
            strategy=DeploymentStrategy(type=strategy, rolling_update=rolling),
            paused=paused,
            progress_deadline_seconds=deadline,
            revision_history_limit=history,
        ),
    )


async def set_image(client: ApiClient, name: str, image: str) -> Deployment:
    """What ``kubectl set image`` does: patch the template (strategic merge by name)."""
    body = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}
    api = client.api(Deployment, NS)
    return await api.patch(name, body, patch_type=PatchType.STRATEGIC)


async def replica_sets(client: ApiClient) -> list[ReplicaSet]:
    return (await client.api(ReplicaSet, NS).list()).items


def condition(d: Deployment, type_: str) -> tuple[str | None, str | None]:
    for cond in (d.status.conditions if d.status else None) or ():
        if cond.type == type_:
            return cond.status, cond.reason
    return None, None


def complete(d: Deployment) -> bool:
    s = d.status
    want = d.spec.replicas if d.spec else None
    return (
        s is not None
        and (s.observed_generation or 0) >= (d.metadata.generation or 0)
        and s.updated_replicas == want
        and s.replicas == want
        and s.available_replicas == want
    )


@dataclass
class Snapshot:
    """Σ spec.replicas and Σ status.availableReplicas over every ReplicaSet at one moment."""

    total_spec: int
    total_available: int
    sizes: dict[str, int]


@dataclass
class FakeReplicaSets:
    """Plays the ReplicaSet controller and the kubelet: each ReplicaSet's status follows its
    spec in two steps (pods exist but are not ready, then, if ``ready``, they are available).
    Scale-downs remove pods (and their availability) at once. Every watch event is recorded.
    """

    client: ApiClient
    ready: bool = True
    history: list[Snapshot] = field(default_factory=list)
    current: dict[str, ReplicaSet] = field(default_factory=dict)
    added: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    """(name of each created ReplicaSet, status.replicas of the others at that moment)."""

    in_flight: int = 0
    """Status writes sent and not answered yet."""

    def busy(self, cached: Iterable[ReplicaSet]) -> bool:
        """Still working: a status write is in flight, or the informer cache (``cached``)
        shows a ReplicaSet version this fake has not reacted to yet."""
        if self.in_flight:
            return True
        seen = {n: rs.metadata.resource_version for n, rs in self.current.items()}
        return any(
            seen.get(rs.metadata.name or "") != rs.metadata.resource_version for rs in cached
        )

    def _record(self) -> None:
        sizes = {n: (rs.spec.replicas or 0) if rs.spec else 0 for n, rs in self.current.items()}
        avail = sum(
            (rs.status.available_replicas or 0) if rs.status else 0 for rs in self.current.values()
        )
        self.history.append(Snapshot(sum(sizes.values()), avail, sizes))

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        api = self.client.api(ReplicaSet, NS)
        async with api.watch(allow_watch_bookmarks=False) as events:
            task_status.started()
            async for ev in events:
                rs = ev.object
                name = rs.metadata.name or ""
                if ev.type == "DELETED":
                    self.current.pop(name, None)
                    self._record()
                    continue
                if ev.type == "ADDED" and name not in self.current:
                    others = {
                        n: (o.status.replicas or 0) if o.status else 0
                        for n, o in self.current.items()
                    }
                    self.added.append((name, others))
                self.current[name] = rs
                self._record()
                await self._react(rs)

    async def _react(self, rs: ReplicaSet) -> None:
        spec = (rs.spec.replicas or 0) if rs.spec else 0
        status = rs.status or ReplicaSetStatus()
        available = status.available_replicas or 0
        if (status.replicas or 0) != spec or (status.observed_generation or 0) != (
            rs.metadata.generation or 0
        ):
            keep = min(available, spec)
            new_status = ReplicaSetStatus(
                replicas=spec,
                fully_labeled_replicas=spec,
                ready_replicas=keep,
                available_replicas=keep,
                observed_generation=rs.metadata.generation,
            )
        elif self.ready and available != spec:
            new_status = msgspec.structs.replace(
                status, ready_replicas=spec, available_replicas=spec
            )
        else:
            return
        self.in_flight += 1
        try:
            await self.client.api(ReplicaSet, NS).update(
                rs, msgspec.structs.replace(rs, status=new_status), subresource="status"
            )
        except (Conflict, NotFound):
            pass  # a newer event follows
        finally:
            self.in_flight -= 1


@dataclass
class ReplicaSetTap(httpx.AsyncBaseTransport):
    """Between a client and the server: fails ReplicaSet creates on demand and can hold the
    ReplicaSet watch stream back (the informer then lags behind the server)."""

    inner: httpx.AsyncBaseTransport = field(default_factory=httpx.AsyncHTTPTransport)
    fail_creates: int = 0
    """Answer this many of the next ReplicaSet creates with 403 (exceeded quota)."""
    failed_creates: int = 0
    watch_gate: anyio.Event | None = None
    """While set to an unset Event, ReplicaSet watch events are held back."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST" and path.endswith("/replicasets") and self.fail_creates:
            self.fail_creates -= 1
            self.failed_creates += 1
            await request.aread()
            return httpx.Response(
                403,
                json={
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "Forbidden",
                    "message": 'replicasets.apps "web" is forbidden: exceeded quota',
                    "code": 403,
                },
            )
        response = await self.inner.handle_async_request(request)
        if (
            request.method == "GET"
            and path.endswith("/replicasets")
            and "watch" in str(request.url)
        ):
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=HeldStream(response.stream, lambda: self.watch_gate),
                extensions=response.extensions,
            )
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class Env(tuple[ApiClient, DeploymentController, FakeRecorder, FakeReplicaSets | None]):
    """``(client, controller, recorder, fake)`` to unpack, plus the informer ``factory``,
    the ``others`` built by ``extra`` and :meth:`quiesce`."""

    factory: SharedInformerFactory
    others: list[Any]
    clock: Clock

    def __new__(
        cls,
        items: tuple[ApiClient, DeploymentController, FakeRecorder, FakeReplicaSets | None],
        factory: SharedInformerFactory,
        others: list[Any],
        clock: Clock,
    ) -> Env:
        env = super().__new__(cls, items)
        env.factory, env.others, env.clock = factory, others, clock
        return env

    async def quiesce(self) -> None:
        """Wait until the Deployment controller (and the real controllers ``extra`` built,
        or the fake ReplicaSets) have acted on everything so far; no fake time passes."""
        client, controller, _, fake = self
        controllers = [controller.controller]
        for other in self.others:
            inner = getattr(other, "manager", other)
            if hasattr(inner, "controller"):
                controllers.append(inner.controller)
        rs_lister = controller.replica_sets

        def busy() -> bool:
            return fake is not None and fake.busy(rs_lister.list())

        await quiesce(
            controllers,
            self.factory,
            client,
            clock=self.clock if isinstance(self.clock, FakeClock) else None,
            busy=busy,
        )


@asynccontextmanager
async def running(
    server: ApiServer,
    *,
    clock: Clock = SYSTEM_CLOCK,
    fake: FakeReplicaSets | None = None,
    extra: Callable[[ApiClient, SharedInformerFactory], Any] | None = None,
    ready: bool = True,
    transport: httpx.AsyncBaseTransport | None = None,
    controller_class: type[DeploymentController] = DeploymentController,
) -> AsyncIterator[Env]:
    """A client, a running informer factory and DeploymentController, and (unless ``extra``
    builds something else, e.g. the real ReplicaSet controller) the fake ReplicaSets.
    ``transport`` sits between the client and the server (to fail or hold requests);
    ``controller_class`` may be a test subclass of DeploymentController."""
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    async with ApiClient(config, transport=transport) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        recorder = FakeRecorder()
        controller = controller_class(client, factory, recorder=recorder, clock=clock)
        built = extra(client, factory) if extra is not None else None
        others: list[Any] = []
        if built is not None:
            others = built if isinstance(built, list) else [built]
        fake_rs = None
        if built is None:
            fake_rs = fake or FakeReplicaSets(client, ready=ready)
            await tg.start(fake_rs.run)
        await tg.start(factory.run)
        await tg.start(controller.run)
        for other in others:
            await tg.start(other.run)
        yield Env((client, controller, recorder, fake_rs), factory, others, clock)
        tg.cancel_scope.cancel()


async def mark_pods_ready(client: ApiClient) -> int:
    """The kubelet: every pod not yet Running and Ready becomes so. Returns how many."""
    api = client.api(Pod, NS)
    count = 0
    for pod in (await api.list()).items:
        if pod.metadata.deletion_timestamp is not None:
            continue
        if pod.status is not None and pod.status.phase == "Running":
            continue
        ready = PodStatus(
            phase="Running",
            conditions=[PodCondition(type="Ready", status="True")],
        )
        try:
            await api.update(pod, msgspec.structs.replace(pod, status=ready), subresource="status")
            count += 1
        except Exception:
            continue
    return count


async def delete_terminating_pods(client: ApiClient) -> None:
    api = client.api(Pod, NS)
    for pod in (await api.list()).items:
        if pod.metadata.deletion_timestamp is not None:
            try:
                await api.delete(pod.metadata.name or "", grace_period_seconds=0)
            except Exception:
                continue

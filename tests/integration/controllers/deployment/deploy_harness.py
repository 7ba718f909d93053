"""Helpers for the Deployment controller's integration tests: a running controller against
the embedded API server, and a fake ReplicaSet controller + kubelet that records every
ReplicaSet change it observes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
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
from kcm.testing import FakeRecorder

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


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 10.0) -> None:
    """Poll ``check`` (it reads the API server) until it is true; fail after ``within`` s."""
    with anyio.fail_after(within):
        while not await check():  # noqa: ASYNC110 - the state lives behind the API
            await anyio.sleep(0.02)


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
        try:
            await self.client.api(ReplicaSet, NS).update(
                rs, msgspec.structs.replace(rs, status=new_status), subresource="status"
            )
        except (Conflict, NotFound):
            pass  # a newer event follows


@asynccontextmanager
async def running(
    server: ApiServer,
    *,
    clock: Clock = SYSTEM_CLOCK,
    fake: FakeReplicaSets | None = None,
    extra: Callable[[ApiClient, SharedInformerFactory], Any] | None = None,
    ready: bool = True,
) -> AsyncIterator[tuple[ApiClient, DeploymentController, FakeRecorder, FakeReplicaSets | None]]:
    """A client, a running informer factory and DeploymentController, and (unless ``extra``
    builds something else, e.g. the real ReplicaSet controller) the fake ReplicaSets."""
    config = msgspec.structs.replace(server.client_config(), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        recorder = FakeRecorder()
        controller = DeploymentController(client, factory, recorder=recorder, clock=clock)
        others = extra(client, factory) if extra is not None else None
        fake_rs = None
        if others is None:
            fake_rs = fake or FakeReplicaSets(client, ready=ready)
            await tg.start(fake_rs.run)
        await tg.start(factory.run)
        await tg.start(controller.run)
        if others is not None:
            for other in others if isinstance(others, list) else [others]:
                await tg.start(other.run)
        yield client, controller, recorder, fake_rs
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

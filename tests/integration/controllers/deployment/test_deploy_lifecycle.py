"""Deployment: the Progressing reasons of pause and resume, a failing ReplicaSet create, and
the rolling-update bounds with the real ReplicaSet controller and a simulated kubelet."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.replicaset import ReplicaSetController
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import Deployment, ReplicaSet
from kcm.models.core_v1 import Pod
from kcm.simulation import SimulatedCluster, SimulationConfig
from kcm.testing import FakeRecorder, eventually
from tests.integration.controllers.deployment.deploy_harness import (
    NS,
    ReplicaSetTap,
    complete,
    condition,
    make_deployment,
    replica_sets,
    running,
    set_image,
)

pytestmark = pytest.mark.anyio


async def record_progressing(
    client: ApiClient, seen: list[tuple[str | None, str | None]], *, task_status: Any
) -> None:
    """Every Progressing (status, reason) the Deployment "web" goes through, in order."""
    api = client.api(Deployment, NS)
    rv = (await api.list()).metadata.resource_version
    async with api.watch(resource_version=rv) as events:
        task_status.started()
        async for event in events:
            if event.object.metadata.name == "web":
                value = condition(event.object, "Progressing")
                if not seen or seen[-1] != value:
                    seen.append(value)


async def test_deploy_pause_then_resume_reports_paused_then_resumed(api_server: ApiServer) -> None:
    async with running(api_server) as env, anyio.create_task_group() as tg:
        client = env[0]
        api = client.api(Deployment, NS)
        seen: list[tuple[str | None, str | None]] = []
        await tg.start(record_progressing, client, seen)
        await api.create(make_deployment(replicas=2, deadline=600))

        async def done() -> bool:
            return complete(await api.get("web"))

        await eventually(done)
        await env.quiesce()
        await api.patch("web", {"spec": {"paused": True}})

        async def paused() -> bool:
            return condition(await api.get("web"), "Progressing") == ("Unknown", "DeploymentPaused")

        await eventually(paused)
        await env.quiesce()
        await api.patch("web", {"spec": {"paused": False}})

        async def progressing_again() -> bool:
            d = await api.get("web")
            return complete(d) and condition(d, "Progressing") == (
                "True",
                "NewReplicaSetAvailable",
            )

        await eventually(progressing_again)
        await env.quiesce()
        tg.cancel_scope.cancel()
    paused_at = seen.index(("Unknown", "DeploymentPaused"))
    # resuming first says so, then the rollout status takes over again
    assert seen[paused_at + 1 :] == [
        ("Unknown", "DeploymentResumed"),
        ("True", "NewReplicaSetAvailable"),
    ], seen


async def test_deploy_replica_set_create_error_sets_progressing_false(
    api_server: ApiServer,
) -> None:
    """A refused ReplicaSet create: Progressing=False/ReplicaSetCreateError and a Warning
    event with the server's message; once creates work the rollout completes."""
    tap = ReplicaSetTap(fail_creates=1_000_000)
    async with running(api_server, transport=tap) as env:
        client, _, recorder, _ = env
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2, deadline=600))

        async def create_error() -> bool:
            d = await api.get("web")
            return condition(d, "Progressing") == ("False", "ReplicaSetCreateError")

        await eventually(create_error)
        d = await api.get("web")
        [cond] = [c for c in d.status.conditions or () if c.type == "Progressing"]  # type: ignore[union-attr]
        assert (cond.message or "").startswith('Failed to create new replica set "web-')
        assert "exceeded quota" in (cond.message or "")
        warnings = [e for e in recorder.events if e.startswith("Warning ReplicaSetCreateError")]
        assert warnings
        assert "exceeded quota" in warnings[0]
        assert await replica_sets(client) == []
        tap.fail_creates = 0  # quota freed: the retry (with backoff) succeeds

        async def done() -> bool:
            d = await api.get("web")
            return complete(d) and condition(d, "Progressing") == (
                "True",
                "NewReplicaSetAvailable",
            )

        await eventually(done)
        assert len(await replica_sets(client)) == 1
        assert tap.failed_creates >= 1


@dataclass
class Bounds:
    """Checks, at every ReplicaSet and pod event, Σ spec.replicas of the ReplicaSets and how
    many pods are available (as the ReplicaSets report it, and as the pods are)."""

    replicas: int
    max_surge: int
    max_unavailable: int
    armed: bool = False
    rss: dict[str, ReplicaSet] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    snapshots: list[tuple[int, int, int, int]] = field(default_factory=list)
    """(Σ spec, Σ reported available, ready pods not being deleted, ReplicaSets with spec > 0)"""

    def check(self) -> None:
        if not self.armed:
            return
        total_spec = sum((rs.spec.replicas or 0) if rs.spec else 0 for rs in self.rss.values())
        reported = sum(
            (rs.status.available_replicas or 0) if rs.status else 0 for rs in self.rss.values()
        )
        ready = sum(
            1
            for p in self.pods.values()
            if p.metadata.deletion_timestamp is None
            and any(
                c.type == "Ready" and c.status == "True"
                for c in (p.status.conditions if p.status else None) or ()
            )
        )
        active = sum(1 for rs in self.rss.values() if rs.spec and (rs.spec.replicas or 0) > 0)
        self.snapshots.append((total_spec, reported, ready, active))
        floor = self.replicas - self.max_unavailable
        history = self.snapshots[-8:]  # the last few states, for a failure message
        assert total_spec <= self.replicas + self.max_surge, history
        assert reported >= floor, history
        assert ready >= floor, history

    async def watch(self, client: ApiClient, *, task_status: Any) -> None:
        async with anyio.create_task_group() as tg:
            await tg.start(self._watch, client.api(ReplicaSet, NS), self.rss)
            await tg.start(self._watch, client.api(Pod, NS), self.pods)
            task_status.started()

    async def _watch(self, api: Any, into: dict[str, Any], *, task_status: Any) -> None:
        listed = await api.list()
        for obj in listed.items:
            into[obj.metadata.name] = obj
        async with api.watch(resource_version=listed.metadata.resource_version) as events:
            task_status.started()
            async for event in events:
                name = event.object.metadata.name
                if event.type == "DELETED":
                    into.pop(name, None)
                else:
                    into[name] = event.object
                self.check()


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "max_surge", "max_unavailable"),
    [(4, 1, 1, 1, 1), (5, "25%", "25%", 2, 1), (3, 1, 0, 1, 0)],
)
async def test_deploy_rolling_update_bounds_with_the_real_replicaset_controller(
    api_server: ApiServer,
    replicas: int,
    surge: int | str,
    unavailable: int | str,
    max_surge: int,
    max_unavailable: int,
) -> None:
    """The real ReplicaSet controller creates and deletes the pods and a simulated kubelet
    (scheduler, node, kubelet) runs them; at every ReplicaSet or pod event during the rollout
    Σ spec.replicas stays within replicas + maxSurge and at least replicas - maxUnavailable
    pods are available, by the ReplicaSets' account and by the pods' own Ready condition."""
    config = SimulationConfig(nodes=1, pod_start_delay=0.0, pod_ready_delay=0.02)

    def others(client: ApiClient, factory: SharedInformerFactory) -> list[Any]:
        return [
            ReplicaSetController(client, factory, recorder=FakeRecorder()),
            SimulatedCluster(client, factory, config=config),
        ]

    bounds = Bounds(replicas, max_surge, max_unavailable)
    async with running(api_server, extra=others) as env, anyio.create_task_group() as tg:
        client = env[0]
        api = client.api(Deployment, NS)
        pods_api = client.api(Pod, NS)
        await api.create(
            make_deployment(replicas=replicas, max_surge=surge, max_unavailable=unavailable)
        )

        async def settled(image: str) -> bool:
            d = await api.get("web")
            pods = [p for p in (await pods_api.list()).items]
            images = {p.spec.containers[0].image for p in pods if p.spec}
            return complete(d) and len(pods) == replicas and images == {image}

        await eventually(lambda: settled("nginx:1"), within=20)
        await tg.start(bounds.watch, client)
        bounds.armed = True
        bounds.check()
        await set_image(client, "web", "nginx:2")
        await eventually(lambda: settled("nginx:2"), within=30)
        tg.cancel_scope.cancel()
    assert len(bounds.snapshots) > replicas  # events were seen all along
    assert any(active == 2 for *_, active in bounds.snapshots)  # a real rolling phase
    assert max(spec for spec, *_ in bounds.snapshots) == replicas + max_surge

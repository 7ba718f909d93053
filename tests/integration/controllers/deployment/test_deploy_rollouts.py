"""Deployment controller against the embedded API server; the test plays the ReplicaSet
controller and kubelet (FakeReplicaSets) and records every ReplicaSet change."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.controllerkit import SAFE_ALPHABET
from kcm.controllers.deployment import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
)
from kcm.models.apps_v1 import Deployment, ReplicaSet
from kcm.models.core_v1 import Container, Pod, PodSpec, PodStatus
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.testing import eventually
from tests.integration.controllers.deployment.deploy_harness import (
    NS,
    complete,
    condition,
    make_deployment,
    replica_sets,
    running,
    set_image,
)

pytestmark = pytest.mark.anyio


async def test_deploy_create_makes_one_hashed_replica_set(api_server: ApiServer) -> None:
    async with running(api_server) as (client, _, recorder, _):
        api = client.api(Deployment, NS)
        d = await api.create(make_deployment(replicas=3))

        async def done() -> bool:
            return complete(await api.get("web"))

        await eventually(done)
        rss = await replica_sets(client)
        assert len(rss) == 1
        rs = rss[0]
        hash_ = (rs.metadata.labels or {})["pod-template-hash"]
        assert set(hash_) <= set(SAFE_ALPHABET)
        assert rs.metadata.name == f"web-{hash_}"
        assert rs.spec is not None
        assert rs.spec.selector is not None
        assert (rs.spec.selector.match_labels or {})["pod-template-hash"] == hash_
        assert rs.spec.template is not None
        assert rs.spec.template.metadata is not None
        assert (rs.spec.template.metadata.labels or {})["pod-template-hash"] == hash_
        ref = (rs.metadata.owner_references or [])[0]
        assert (ref.kind, ref.uid, ref.controller, ref.block_owner_deletion) == (
            "Deployment",
            d.metadata.uid,
            True,
            True,
        )
        ann = rs.metadata.annotations or {}
        assert ann[REVISION_ANNOTATION] == "1"
        assert ann[DESIRED_REPLICAS_ANNOTATION] == "3"
        assert ann[MAX_REPLICAS_ANNOTATION] == "4"  # 3 + 25% rounded up
        d = await api.get("web")
        assert (d.metadata.annotations or {})[REVISION_ANNOTATION] == "1"
        assert d.status is not None
        assert (d.status.ready_replicas, d.status.unavailable_replicas or 0) == (3, 0)
        assert condition(d, "Available") == ("True", "MinimumReplicasAvailable")
        assert condition(d, "Progressing") == ("True", "NewReplicaSetAvailable")
        assert f"Normal ScalingReplicaSet Scaled up replica set {rs.metadata.name} to 3" in (
            recorder.events
        )


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "max_surge", "max_unavailable"),
    [(4, 1, 1, 1, 1), (10, "25%", "25%", 3, 2), (5, 0, 2, 0, 2)],
)
async def test_deploy_rolling_update_stays_within_surge_and_unavailable(
    api_server: ApiServer,
    replicas: int,
    surge: int | str,
    unavailable: int | str,
    max_surge: int,
    max_unavailable: int,
) -> None:
    async with running(api_server) as (client, _, _, fake):
        assert fake is not None
        api = client.api(Deployment, NS)
        await api.create(
            make_deployment(replicas=replicas, max_surge=surge, max_unavailable=unavailable)
        )

        async def done() -> bool:
            d = await api.get("web")
            return complete(d) and len(await replica_sets(client)) == 1

        await eventually(done)
        start = len(fake.history)
        await set_image(client, "web", "nginx:2")

        async def rolled() -> bool:
            d = await api.get("web")
            sizes = {
                rs.metadata.name: rs.spec.replicas for rs in await replica_sets(client) if rs.spec
            }
            return complete(d) and sorted(sizes.values()) == [0, replicas]

        await eventually(rolled, within=20)
        during = fake.history[start:]
        assert any(len([n for n in s.sizes.values() if n > 0]) == 2 for s in during)
        for snap in during:
            assert snap.total_spec <= replicas + max_surge, snap
            assert snap.total_available >= replicas - max_unavailable, snap
        d = await api.get("web")
        assert (d.metadata.annotations or {})[REVISION_ANNOTATION] == "2"


async def test_deploy_recreate_scales_old_to_zero_and_waits_for_pods(
    api_server: ApiServer,
) -> None:
    async with running(api_server) as (client, _, recorder, fake):
        assert fake is not None
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=3, strategy="Recreate"))

        async def done() -> bool:
            return complete(await api.get("web"))

        await eventually(done)
        [old] = await replica_sets(client)
        # an old pod still running (the kubelet has not finished it)
        pod = await client.api(Pod, NS).create(
            Pod(
                metadata=ObjectMeta(
                    name="web-old-pod",
                    labels={"app": "web"},
                    owner_references=[
                        OwnerReference(
                            api_version="apps/v1",
                            kind="ReplicaSet",
                            name=old.metadata.name,
                            uid=old.metadata.uid,
                            controller=True,
                        )
                    ],
                ),
                spec=PodSpec(containers=[Container(name="app", image="nginx:1")]),
            )
        )
        await client.api(Pod, NS).update(
            pod,
            Pod(metadata=pod.metadata, spec=pod.spec, status=PodStatus(phase="Running")),
            subresource="status",
        )
        await set_image(client, "web", "nginx:2")

        async def old_scaled_down() -> bool:
            rs = await client.api(ReplicaSet, NS).get(old.metadata.name or "")
            return bool(rs.spec and rs.spec.replicas == 0 and rs.status and not rs.status.replicas)

        await eventually(old_scaled_down)
        # the old pod still runs: no new ReplicaSet yet, even after several syncs
        d = await api.get("web")
        await api.patch("web", {"metadata": {"annotations": {"poke": "1"}}})
        await eventually(lambda: _observed_after(client, d))
        assert len(await replica_sets(client)) == 1
        await client.api(Pod, NS).delete("web-old-pod", grace_period_seconds=0)

        async def rolled() -> bool:
            return complete(await api.get("web")) and len(await replica_sets(client)) == 2

        await eventually(rolled)
        new_name, others = fake.added[-1]
        assert others[old.metadata.name or ""] == 0  # old had no pods when new was created
        new = await client.api(ReplicaSet, NS).get(new_name)
        assert new.spec is not None
        assert new.spec.replicas == 3
        assert (
            f"Normal ScalingReplicaSet Scaled down replica set {old.metadata.name} to 0"
            in recorder.events
        )
        assert f"Normal ScalingReplicaSet Scaled up replica set {new_name} to 3" in recorder.events


async def _observed_after(client: object, before: Deployment) -> bool:
    from kcm.client import ApiClient

    assert isinstance(client, ApiClient)
    d = await client.api(Deployment, NS).get("web")
    return (d.metadata.resource_version or "") != (before.metadata.resource_version or "")


async def test_deploy_rollback_reuses_the_old_replica_set(api_server: ApiServer) -> None:
    async with running(api_server) as (client, _, _, _):
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2))

        async def settled(n: int) -> bool:
            d = await api.get("web")
            return complete(d) and len(await replica_sets(client)) == n

        await eventually(lambda: settled(1))
        [first] = await replica_sets(client)
        await set_image(client, "web", "nginx:2")
        await eventually(lambda: settled(2))
        # `kubectl rollout undo`: the template goes back to revision 1's
        await set_image(client, "web", "nginx:1")

        async def back() -> bool:
            rs = await client.api(ReplicaSet, NS).get(first.metadata.name or "")
            d = await api.get("web")
            return (
                complete(d)
                and rs.spec is not None
                and rs.spec.replicas == 2
                and (rs.metadata.annotations or {}).get(REVISION_ANNOTATION) == "3"
            )

        await eventually(back)
        rss = {rs.metadata.name: rs for rs in await replica_sets(client)}
        assert len(rss) == 2  # no third ReplicaSet
        reused = rss[first.metadata.name]
        assert reused.metadata.uid == first.metadata.uid
        assert (reused.metadata.annotations or {})[REVISION_HISTORY_ANNOTATION] == "1"
        d = await api.get("web")
        assert (d.metadata.annotations or {})[REVISION_ANNOTATION] == "3"
        other = next(rs for n, rs in rss.items() if n != first.metadata.name)
        assert other.spec is not None
        assert other.spec.replicas == 0


async def test_deploy_deprecated_rollback_annotation(api_server: ApiServer) -> None:
    async with running(api_server) as (client, _, recorder, _):
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=1))

        async def settled(n: int, image: str) -> bool:
            d = await api.get("web")
            tmpl = d.spec.template if d.spec else None
            img = tmpl.spec.containers[0].image if tmpl and tmpl.spec else None
            return complete(d) and img == image and len(await replica_sets(client)) == n

        await eventually(lambda: settled(1, "nginx:1"))
        await set_image(client, "web", "nginx:2")
        await eventually(lambda: settled(2, "nginx:2"))
        await api.patch(
            "web", {"metadata": {"annotations": {"deprecated.deployment.rollback.to": "0"}}}
        )
        await eventually(lambda: settled(2, "nginx:1"))
        d = await api.get("web")
        assert "deprecated.deployment.rollback.to" not in (d.metadata.annotations or {})
        assert (
            'Normal DeploymentRollback Rolled back deployment "web" to revision 1'
            in recorder.events
        )


async def test_deploy_paused_does_not_roll_out_but_scales(api_server: ApiServer) -> None:
    async with running(api_server) as (client, _, _, _):
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2))

        async def done() -> bool:
            return complete(await api.get("web"))

        await eventually(done)
        await api.patch("web", {"spec": {"paused": True}})

        async def paused() -> bool:
            return condition(await api.get("web"), "Progressing") == ("Unknown", "DeploymentPaused")

        await eventually(paused)
        await set_image(client, "web", "nginx:2")
        await api.patch("web", {"spec": {"replicas": 4}})

        async def scaled() -> bool:
            rss = await replica_sets(client)
            return len(rss) == 1 and rss[0].spec is not None and rss[0].spec.replicas == 4

        await eventually(scaled)
        d = await api.get("web")
        await eventually(lambda: _generation_observed(api))
        assert len(await replica_sets(client)) == 1  # still no rollout
        [rs] = await replica_sets(client)
        assert (rs.metadata.annotations or {})[DESIRED_REPLICAS_ANNOTATION] == "4"
        await api.patch("web", {"spec": {"paused": False}})

        async def rolled() -> bool:
            d = await api.get("web")
            return complete(d) and len(await replica_sets(client)) == 2

        await eventually(rolled)
        d = await api.get("web")
        assert condition(d, "Progressing") == ("True", "NewReplicaSetAvailable")


async def _generation_observed(api: object) -> bool:
    d = await api.get("web")  # type: ignore[attr-defined]
    return bool(d.status and d.status.observed_generation == d.metadata.generation)


async def test_deploy_revision_history_limit_cleans_old_replica_sets(
    api_server: ApiServer,
) -> None:
    async with running(api_server) as (client, _, _, _):
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2, history=1))

        async def settled(image: str) -> bool:
            d = await api.get("web")
            rss = await replica_sets(client)
            tmpl = d.spec.template if d.spec else None
            img = tmpl.spec.containers[0].image if tmpl and tmpl.spec else None
            return complete(d) and img == image and len(rss) <= 2

        await eventually(lambda: settled("nginx:1"))
        for image in ("nginx:2", "nginx:3", "nginx:4"):
            await set_image(client, "web", image)
            await eventually(lambda image=image: settled(image), within=20)  # type: ignore[misc]
        rss = await replica_sets(client)
        revisions = sorted(int((rs.metadata.annotations or {})[REVISION_ANNOTATION]) for rs in rss)
        assert revisions == [3, 4]  # revisions 1 and 2 were deleted
        old = [rs for rs in rss if (rs.metadata.annotations or {})[REVISION_ANNOTATION] == "3"]
        assert old[0].spec is not None
        assert old[0].spec.replicas == 0


async def test_deploy_proportional_scaling_mid_rollout(api_server: ApiServer) -> None:
    async with running(api_server, ready=False) as (client, _, _, fake):
        assert fake is not None
        api = client.api(Deployment, NS)
        # old pods are ready; new ones never become ready, so the rollout stalls mid-way
        fake.ready = True
        await api.create(make_deployment(replicas=4, max_surge=1, max_unavailable=1))

        async def done() -> bool:
            return complete(await api.get("web"))

        await eventually(done)
        fake.ready = False
        await set_image(client, "web", "nginx:2")

        async def stalled() -> bool:
            sizes = sorted(rs.spec.replicas or 0 for rs in await replica_sets(client) if rs.spec)
            return sizes == [2, 3]  # new 2 (surge + unavailable), old 3

        await eventually(stalled)
        await api.patch("web", {"spec": {"replicas": 8}})

        async def grown() -> bool:
            rss = await replica_sets(client)
            return all(
                (rs.metadata.annotations or {}).get(DESIRED_REPLICAS_ANNOTATION) == "8"
                for rs in rss
            )

        await eventually(grown)
        sizes = {
            rs.spec.template.spec.containers[0].image: rs.spec.replicas
            for rs in await replica_sets(client)
            if rs.spec and rs.spec.template and rs.spec.template.spec
        }  # type: ignore[misc]
        # 9 allowed (8 + maxSurge 1): old 3*9/5 = 5.4 → 5, new gets the other 4
        assert sizes == {"nginx:1": 5, "nginx:2": 4}

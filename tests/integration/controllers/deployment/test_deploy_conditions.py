"""Deployment conditions, selectors, adoption and hash collisions; and the Deployment and
ReplicaSet controllers together (the test plays only the kubelet)."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.deployment import (
    MAX_RETRIES,
    STALE_CACHE_MAX_WAIT,
    DeploymentController,
    compute_hash,
)
from kcm.controllers.replicaset import ReplicaSetController
from kcm.errors import InternalError
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.apps_v1 import Deployment, ReplicaSet, ReplicaSetSpec
from kcm.models.core_v1 import Pod
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.runtime import Result, TerminalError
from kcm.testing import FakeClock, FakeRecorder, client_config_for, eventually
from tests.integration.controllers.deployment.deploy_harness import (
    NS,
    ReplicaSetTap,
    complete,
    condition,
    delete_terminating_pods,
    make_deployment,
    mark_pods_ready,
    replica_sets,
    running,
    set_image,
)

pytestmark = pytest.mark.anyio


async def test_deploy_progress_deadline_exceeded_on_fake_clock(api_server: ApiServer) -> None:
    clock = FakeClock()
    async with running(api_server, clock=clock, ready=False) as env:
        client = env[0]
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2, deadline=30))

        async def created() -> bool:
            d = await api.get("web")
            return condition(d, "Progressing") == ("True", "ReplicaSetUpdated") and bool(
                d.status and d.status.updated_replicas == 2
            )

        await eventually(created)
        d = await api.get("web")
        assert condition(d, "Available") == ("False", "MinimumReplicasUnavailable")
        await env.quiesce()
        await clock.advance(20)
        await env.quiesce()  # whatever 20 s could trigger has happened: not the deadline
        d = await api.get("web")
        assert condition(d, "Progressing") == ("True", "ReplicaSetUpdated")

        async def timed_out() -> bool:
            await clock.advance(0.5)
            return condition(await api.get("web"), "Progressing") == (
                "False",
                "ProgressDeadlineExceeded",
            )

        await eventually(timed_out)
        # the controller woke itself (requeue after the deadline), nothing else changed
        assert clock.monotonic() - 1000 >= 30


async def test_deploy_adopts_a_matching_orphan_replica_set(api_server: ApiServer) -> None:
    async with running(api_server) as (client, _, _, _):
        api = client.api(Deployment, NS)
        d = await api.create(make_deployment(replicas=2, paused=True))
        assert d.spec is not None
        assert d.spec.template is not None
        template = d.spec.template
        labels = {
            **((template.metadata.labels if template.metadata else None) or {}),
            "pod-template-hash": "orphan",
        }
        orphan = ReplicaSet(
            metadata=ObjectMeta(name="web-orphan", namespace=NS, labels=labels),
            spec=ReplicaSetSpec(
                replicas=2,
                selector=LabelSelector(match_labels=labels),
                template=msgspec.structs.replace(template, metadata=ObjectMeta(labels=labels)),
            ),
        )
        await client.api(ReplicaSet, NS).create(orphan)
        await api.patch("web", {"spec": {"paused": False}})

        async def adopted() -> bool:
            rs = await client.api(ReplicaSet, NS).get("web-orphan")
            refs = rs.metadata.owner_references or []
            return complete(await api.get("web")) and any(r.uid == d.metadata.uid for r in refs)

        await eventually(adopted)
        assert [rs.metadata.name for rs in await replica_sets(client)] == ["web-orphan"]


async def test_deploy_hash_collision_bumps_collision_count(api_server: ApiServer) -> None:
    async with running(api_server) as (client, _, _, _):
        api = client.api(Deployment, NS)
        d = await api.create(make_deployment(replicas=1, paused=True))
        assert d.spec is not None
        taken = f"web-{compute_hash(d.spec.template, None)}"
        # somebody else's ReplicaSet with the name the Deployment wants (not selected by it)
        other = {"app": "other"}
        await client.api(ReplicaSet, NS).create(
            ReplicaSet(
                metadata=ObjectMeta(name=taken, namespace=NS, labels=other),
                spec=ReplicaSetSpec(
                    replicas=0,
                    selector=LabelSelector(match_labels=other),
                    template=msgspec.structs.replace(
                        d.spec.template, metadata=ObjectMeta(labels=other)
                    ),
                ),
            )
        )
        await api.patch("web", {"spec": {"paused": False}})

        async def done() -> bool:
            return complete(await api.get("web"))

        await eventually(done)
        d = await api.get("web")
        assert d.status is not None
        assert d.status.collision_count == 1
        mine = [rs for rs in await replica_sets(client) if rs.metadata.name != taken]
        assert [rs.metadata.name for rs in mine] == [f"web-{compute_hash(d.spec.template, 1)}"]  # type: ignore[union-attr]


# -- with the real ReplicaSet controller ----------------------------------------------------


def with_replicaset_controller(client: ApiClient, factory: SharedInformerFactory) -> object:
    return ReplicaSetController(client, factory, recorder=FakeRecorder())


async def test_deploy_with_replicaset_controller_rolls_out(api_server: ApiServer) -> None:
    async with running(api_server, extra=with_replicaset_controller) as (client, _, _, _):
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=3, max_surge=1, max_unavailable=0))

        async def settle_until(check_image: str) -> bool:
            await mark_pods_ready(client)
            await delete_terminating_pods(client)
            d = await api.get("web")
            tmpl = d.spec.template if d.spec else None
            img = tmpl.spec.containers[0].image if tmpl and tmpl.spec else None
            pods = [p for p in (await client.api(Pod, NS).list()).items]
            return complete(d) and img == check_image and len(pods) == 3

        await eventually(lambda: settle_until("nginx:1"), within=20)
        await set_image(client, "web", "nginx:2")
        await eventually(lambda: settle_until("nginx:2"), within=30)
        pods = (await client.api(Pod, NS).list()).items
        assert all(p.spec is not None and p.spec.containers[0].image == "nginx:2" for p in pods)
        d = await api.get("web")
        assert condition(d, "Progressing") == ("True", "NewReplicaSetAvailable")
        assert condition(d, "Available") == ("True", "MinimumReplicasAvailable")
        sizes = sorted((rs.spec.replicas or 0) for rs in await replica_sets(client) if rs.spec)
        assert sizes == [0, 3]


class _AlwaysFailing(DeploymentController):
    async def _reconcile(self, key: ObjectKey) -> Result:
        raise InternalError("boom")


async def test_deploy_drops_a_key_after_15_failed_syncs(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        controller = _AlwaysFailing(
            client, SharedInformerFactory(client), recorder=FakeRecorder(), clock=FakeClock()
        )
        key = ObjectKey(NS, "web")
        failures = 0
        while True:
            try:
                await controller.reconcile(key)
            except TerminalError as exc:
                cause = exc.__cause__
                break
            except InternalError:
                failures += 1
                controller.controller.queue.add_rate_limited(key)  # what the runtime does
            assert failures <= MAX_RETRIES
        assert failures == MAX_RETRIES == 15
        assert isinstance(cause, InternalError)


async def test_deploy_waits_for_the_cache_to_show_its_own_writes(api_server: ApiServer) -> None:
    """A sync is skipped while the cache still shows an object the controller replaced, or
    lacks one it created (kube-controller-manager would act on it and get a 409 or an
    AlreadyExists); once the informer catches up the record is dropped."""
    async with running(api_server) as (client, controller, _, _):
        api = client.api(Deployment, NS)
        d = await api.create(make_deployment(replicas=1, paused=True))
        key = ObjectKey(NS, "ghost")  # records of a key the running controller never writes
        assert not controller.cache_is_stale(key, d)
        controller.note_written(key, "ReplicaSet", None, name="web-new")
        assert controller.cache_is_stale(key, d)  # created, not in the cache yet
        rs = make_replica_set("web-new")
        await client.api(ReplicaSet, NS).create(rs)

        async def rs_cached() -> bool:
            return controller.replica_sets.namespace(NS).get_or_none("web-new") is not None

        await eventually(rs_cached)
        assert not controller.cache_is_stale(key, d)
        controller.note_written(key, "Deployment", d)  # we replaced this version of it
        assert controller.cache_is_stale(key, d)
        newer = msgspec.structs.replace(
            d, metadata=msgspec.structs.replace(d.metadata, resource_version="999999")
        )
        assert not controller.cache_is_stale(key, newer)
        assert not controller.cache_is_stale(key, d)  # the record is gone


class _GatedSyncs(DeploymentController):
    """Syncs wait for ``gate`` (when set) before reading the cache."""

    gate: anyio.Event | None = None

    async def _reconcile(self, key: ObjectKey) -> Result:
        if self.gate is not None:
            await self.gate.wait()
        return await super()._reconcile(key)


async def test_deploy_replica_set_deleted_before_the_cache_saw_it_does_not_stall(
    api_server: ApiServer,
) -> None:
    """The controller creates a ReplicaSet, which is deleted before its informer shows it;
    the informer then sees it come and go before the next sync. The delete event clears the
    wait for the cache, so that sync re-creates it at once (the fake clock never moves; it
    used to wait out a 5-minute expiry)."""
    clock = FakeClock()
    tap = ReplicaSetTap()
    async with running(api_server, clock=clock, transport=tap, controller_class=_GatedSyncs) as env:
        client, controller, _, _ = env
        assert isinstance(controller, _GatedSyncs)
        rs_api = client.api(ReplicaSet, NS)
        rs_informer = env.factory.informer_for(ReplicaSet)
        tap.watch_gate = anyio.Event()  # the controller's ReplicaSet informer falls behind
        d = await client.api(Deployment, NS).create(make_deployment(replicas=1))

        async def created() -> bool:
            return len(await replica_sets(client)) == 1

        await eventually(created)
        [first] = await replica_sets(client)
        assert controller.cache_is_stale(ObjectKey(NS, "web"), d)
        controller.gate = anyio.Event()  # syncs from now on wait before reading the cache
        await rs_api.delete(first.metadata.name or "")
        now = (await rs_api.list()).metadata.resource_version or ""
        tap.watch_gate.set()  # the informer sees the ReplicaSet come and go ...
        with anyio.fail_after(10):
            await rs_informer.wait_for_resource_version(now)
        await clock.advance(0)  # ... and its handlers have run (no time passes)
        controller.gate.set()

        async def recreated() -> bool:
            rss = await replica_sets(client)
            return len(rss) == 1 and rss[0].metadata.uid != first.metadata.uid

        await eventually(recreated)
        await env.quiesce()
        assert complete(await client.api(Deployment, NS).get("web"))
        assert clock.monotonic() == 1000.0  # no time passed


async def test_deploy_waiting_for_own_writes_is_bounded_per_write(api_server: ApiServer) -> None:
    """Each write is waited for at most STALE_CACHE_MAX_WAIT (on the controller's clock); a
    later write does not extend the wait for an earlier one."""
    clock = FakeClock()
    async with ApiClient(client_config_for(api_server)) as client:
        controller = DeploymentController(
            client, SharedInformerFactory(client), recorder=FakeRecorder(), clock=clock
        )
        d = make_deployment()
        key = ObjectKey(NS, "web")
        controller.note_written(key, "ReplicaSet", None, name="web-a")
        await clock.advance(STALE_CACHE_MAX_WAIT - 10)
        controller.note_written(key, "ReplicaSet", None, name="web-b")
        await clock.advance(9)
        assert controller.cache_is_stale(key, d)  # both still awaited
        await clock.advance(1)  # web-a's wait is over, web-b's is not
        assert controller.cache_is_stale(key, d)
        controller.forget_replica_set(make_replica_set("web-b"))  # its delete event
        assert not controller.cache_is_stale(key, d)
        controller.note_written(key, "ReplicaSet", None, name="web-c")
        await clock.advance(STALE_CACHE_MAX_WAIT - 1)
        assert controller.cache_is_stale(key, d)
        await clock.advance(1)
        assert not controller.cache_is_stale(key, d)


def make_replica_set(name: str) -> ReplicaSet:
    labels = {"app": "unrelated"}
    d = make_deployment()
    assert d.spec is not None
    return ReplicaSet(
        metadata=ObjectMeta(name=name, namespace=NS, labels=labels),
        spec=ReplicaSetSpec(
            replicas=0,
            selector=LabelSelector(match_labels=labels),
            template=msgspec.structs.replace(d.spec.template, metadata=ObjectMeta(labels=labels)),
        ),
    )


async def test_deploy_recreate_with_replicaset_controller(api_server: ApiServer) -> None:
    async with running(api_server, extra=with_replicaset_controller) as (client, _, recorder, _):
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2, strategy="Recreate"))

        async def settled(image: str) -> bool:
            await mark_pods_ready(client)
            d = await api.get("web")
            pods = (await client.api(Pod, NS).list()).items
            images = {p.spec.containers[0].image for p in pods if p.spec}
            return complete(d) and images == {image} and len(pods) == 2

        await eventually(lambda: settled("nginx:1"), within=20)
        [old] = await replica_sets(client)
        await set_image(client, "web", "nginx:2")
        await eventually(lambda: settled("nginx:2"), within=20)
        scaled = [e for e in recorder.events if "ScalingReplicaSet" in e]
        down = scaled.index(
            f"Normal ScalingReplicaSet Scaled down replica set {old.metadata.name} to 0"
        )
        up = next(
            i for i, e in enumerate(scaled) if "Scaled up" in e and old.metadata.name not in e
        )
        assert down < up  # old went to 0 before the new one was created

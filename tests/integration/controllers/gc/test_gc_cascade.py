"""The garbage collector against the embedded API server: background, foreground, orphan."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.garbagecollector import GarbageCollectorController
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import ConfigMap, Secret
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.testing import FakeRecorder, client_config_for, eventually
from tests.integration.controllers.gc.gc_harness import gone, owner_ref, running

pytestmark = pytest.mark.anyio


def make_gc(recorder: FakeRecorder) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> GarbageCollectorController:
        return GarbageCollectorController(client, factory, recorder=recorder, workers=4)

    return build


def cm(name: str, *owners: OwnerReference, namespace: str = "default") -> ConfigMap:
    return ConfigMap(
        metadata=ObjectMeta(name=name, namespace=namespace, owner_references=list(owners) or None)
    )


async def test_background_deletion_removes_dependents(api_server: ApiServer) -> None:
    async with running(api_server, make_gc(FakeRecorder())) as (client, _):
        cms = client.api(ConfigMap, "default")
        owner = await cms.create(cm("owner"))
        for i in range(3):
            await cms.create(cm(f"dep-{i}", owner_ref(owner, controller=True)))
        bystander = await cms.create(cm("bystander"))
        await cms.delete("owner", propagation_policy="Background")

        async def dependents_gone() -> bool:
            return all([await gone(cms, f"dep-{i}") for i in range(3)])

        await eventually(dependents_gone)
        assert (await cms.get("bystander")).metadata.uid == bystander.metadata.uid


async def test_foreground_deletes_dependents_first_and_owner_last(api_server: ApiServer) -> None:
    async with running(api_server, make_gc(FakeRecorder())) as (client, _):
        cms = client.api(ConfigMap, "default")
        secrets = client.api(Secret, "default")
        top = await cms.create(cm("top"))
        mid = await secrets.create(
            Secret(
                metadata=ObjectMeta(
                    name="mid", owner_references=[owner_ref(top, block=True, controller=True)]
                )
            )
        )
        await cms.create(cm("leaf-a", owner_ref(mid, block=True, controller=True)))
        await cms.create(cm("leaf-b", owner_ref(mid, block=True, controller=True)))
        order: list[str] = []
        seen_finalizer: list[bool] = []

        async def watch(api: Any, rv: str | None) -> None:
            async with api.watch(resource_version=rv) as events:
                async for event in events:
                    meta = event.object.metadata
                    if event.type == "DELETED":
                        order.append(meta.name)
                    elif meta.name == "top" and meta.deletion_timestamp is not None:
                        seen_finalizer.append("foregroundDeletion" in (meta.finalizers or ()))

        cm_rv = (await cms.list()).metadata.resource_version
        secret_rv = (await secrets.list()).metadata.resource_version
        async with anyio.create_task_group() as tg:
            watches = api_server.store.watch_count
            tg.start_soon(watch, cms, cm_rv)
            tg.start_soon(watch, secrets, secret_rv)
            with anyio.fail_after(5):
                await api_server.wait_for_watches(watches + 2)
            await cms.delete("top", propagation_policy="Foreground")

            async def top_gone() -> bool:
                return "top" in order

            await eventually(top_gone)
            tg.cancel_scope.cancel()
        assert sorted(order[:2]) == ["leaf-a", "leaf-b"]
        assert order[2:] == ["mid", "top"]
        assert seen_finalizer
        assert all(seen_finalizer)


async def test_orphan_keeps_dependents_without_the_owner_reference(api_server: ApiServer) -> None:
    async with running(api_server, make_gc(FakeRecorder())) as (client, _):
        cms = client.api(ConfigMap, "default")
        owner = await cms.create(cm("owner"))
        other = await cms.create(cm("other-owner"))
        await cms.create(cm("dep-1", owner_ref(owner, block=True)))
        await cms.create(cm("dep-2", owner_ref(owner), owner_ref(other)))
        await cms.delete("owner", propagation_policy="Orphan")

        async def owner_gone() -> bool:
            return await gone(cms, "owner")

        await eventually(owner_gone)
        dep1 = await cms.get("dep-1")
        dep2 = await cms.get("dep-2")
        assert not dep1.metadata.owner_references
        assert [r.uid for r in dep2.metadata.owner_references or ()] == [other.metadata.uid]


async def test_dangling_owner_uid_is_collected(api_server: ApiServer) -> None:
    async with running(api_server, make_gc(FakeRecorder())) as (client, _):
        cms = client.api(ConfigMap, "default")
        secrets = client.api(Secret, "default")
        real = await secrets.create(Secret(metadata=ObjectMeta(name="real")))
        ghost = OwnerReference(api_version="v1", kind="Secret", name="ghost", uid=str(uuid.uuid4()))
        # same name as an existing Secret, another uid: also dangling
        stale = OwnerReference(api_version="v1", kind="Secret", name="real", uid=str(uuid.uuid4()))
        await cms.create(cm("orphan-of-ghost", ghost))
        await cms.create(cm("orphan-of-stale", stale))
        await cms.create(cm("owned", owner_ref(real)))

        async def collected() -> bool:
            return await gone(cms, "orphan-of-ghost") and await gone(cms, "orphan-of-stale")

        await eventually(collected)
        assert (await cms.get("owned")).metadata.owner_references


async def test_one_of_two_owners_deleted_keeps_the_dependent(api_server: ApiServer) -> None:
    async with running(api_server, make_gc(FakeRecorder())) as (client, _):
        cms = client.api(ConfigMap, "default")
        a = await cms.create(cm("a"))
        b = await cms.create(cm("b"))
        await cms.create(cm("shared", owner_ref(a), owner_ref(b)))
        await cms.delete("a")

        async def ref_removed() -> bool:
            refs = (await cms.get("shared")).metadata.owner_references or ()
            return [r.uid for r in refs] == [b.metadata.uid]

        await eventually(ref_removed)
        await cms.delete("b")

        async def shared_gone() -> bool:
            return await gone(cms, "shared")

        await eventually(shared_gone)


async def test_starting_on_existing_objects_keeps_every_owned_dependent(
    api_server: ApiServer,
) -> None:
    config = msgspec.structs.replace(client_config_for(api_server), qps=-1)
    async with ApiClient(config) as setup:
        cms = setup.api(ConfigMap, "default")
        for i in range(100):
            owner = await cms.create(cm(f"owner-{i}"))
            for j in range(2):
                await cms.create(cm(f"dep-{i}-{j}", owner_ref(owner, block=True)))
        ghost = OwnerReference(api_version="v1", kind="ConfigMap", name="x", uid=str(uuid.uuid4()))
        await cms.create(cm("dangling", ghost))
    async with running(api_server, make_gc(FakeRecorder())) as (client, [gc]):
        cms = client.api(ConfigMap, "default")

        async def dangling_gone() -> bool:
            return await gone(cms, "dangling")

        await eventually(dangling_gone)

        async def queues_idle() -> bool:
            queue = gc.attempt_to_delete.queue
            return not len(queue) and not queue.processing and not queue.waiting

        await eventually(queues_idle)
        names = {c.metadata.name for c in (await cms.list()).items}
        assert len([n for n in names if n and n.startswith("dep-")]) == 200

"""StatefulSet updates and history against the embedded API server: RollingUpdate with a
partition, OnDelete, rollback, the history limit, name collisions, adoption and release."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.controllerkit import CONTROLLER_REVISION_HASH_LABEL
from kcm.controllers.statefulset import POD_NAME_LABEL, REVISION_LABEL
from kcm.models.apps_v1 import ControllerRevision, StatefulSet
from kcm.models.core_v1 import Container, Pod, PodSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import get_controller_of
from tests.integration.controllers.statefulset.sts_harness import (
    NS,
    Cluster,
    make_set,
    running,
)

pytestmark = pytest.mark.anyio


async def revision_of(c: Cluster) -> dict[str, str]:
    return {
        str(p.metadata.name): (p.metadata.labels or {}).get(REVISION_LABEL, "")
        for p in await c.pods()
    }


async def images(c: Cluster) -> dict[str, str]:
    out = {}
    for p in await c.pods():
        assert p.spec is not None
        assert p.spec.containers
        out[str(p.metadata.name)] = str(p.spec.containers[0].image)
    return out


async def test_sts_rolls_out_from_the_highest_ordinal_down_to_the_partition(
    api_server: ApiServer,
) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=3, partition=2))
        await c.roll_out()
        first = (await c.get()).status
        assert first is not None
        await c.set_image("web", "nginx:2")
        await c.roll_out()
        status = (await c.get()).status
        assert status is not None
        assert status.update_revision != status.current_revision == first.current_revision
        assert (status.current_replicas, status.updated_replicas) == (2, 1)
        assert await images(c) == {"web-0": "nginx:1", "web-1": "nginx:1", "web-2": "nginx:2"}
        assert c.tap.pod_writes("DELETE") == ["web-2"]

        await c.patch_set("web", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})
        await c.roll_out()
        assert c.tap.pod_writes("DELETE") == ["web-2", "web-1", "web-0"]
        assert await images(c) == {"web-0": "nginx:2", "web-1": "nginx:2", "web-2": "nginx:2"}
        done = (await c.get()).status
        assert done is not None
        assert done.current_revision == done.update_revision == status.update_revision
        assert (done.current_replicas, done.updated_replicas, done.ready_replicas) == (3, 3, 3)


async def test_sts_rolling_update_waits_for_each_replaced_pod(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=3))
        await c.roll_out()
        await c.set_image("web", "nginx:2")
        assert c.tap.pod_writes("DELETE") == ["web-2"]
        assert (await c.pod("web-2")).status.phase == "Pending"  # type: ignore[union-attr]
        await c.settle()
        assert c.tap.pod_writes("DELETE") == ["web-2"]  # web-1 waits for the new web-2
        await c.make_ready("web-2")
        assert c.tap.pod_writes("DELETE") == ["web-2", "web-1"]


async def test_sts_on_delete_replaces_only_deleted_pods(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2, strategy="OnDelete"))
        await c.roll_out()
        old = await revision_of(c)
        await c.set_image("web", "nginx:2")
        assert c.tap.pod_writes("DELETE") == []
        status = (await c.get()).status
        assert status is not None
        assert status.update_revision != status.current_revision
        await c.delete_pod("web-0")
        await c.roll_out()
        now = await revision_of(c)
        assert now["web-0"] == status.update_revision
        assert now["web-1"] == old["web-1"] == status.current_revision
        assert await images(c) == {"web-0": "nginx:2", "web-1": "nginx:1"}


async def test_sts_rollback_renumbers_the_old_revision(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=1))
        await c.roll_out()
        await c.set_image("web", "nginx:2")
        await c.roll_out()
        await c.set_image("web", "nginx:1")
        await c.roll_out()
        numbers = {str(r.metadata.name): r.revision for r in await c.revisions()}
        assert sorted(numbers.values()) == [2, 3]  # no third revision: the first came back
        status = (await c.get()).status
        assert status is not None
        assert numbers[str(status.update_revision)] == 3
        assert await images(c) == {"web-0": "nginx:1"}


async def test_sts_deletes_history_beyond_the_limit_but_never_a_live_revision(
    api_server: ApiServer,
) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2, history=1, partition=1))
        await c.roll_out()
        for tag in ("nginx:2", "nginx:3"):
            await c.set_image("web", tag)
            await c.roll_out()
        # web-0 stays on revision 1 (below the partition): 1 (live), 2 (history), 3 (update)
        assert sorted(r.revision for r in await c.revisions()) == [1, 2, 3]
        await c.set_image("web", "nginx:4")
        await c.roll_out()
        assert sorted(r.revision for r in await c.revisions()) == [1, 3, 4]
        deleted = [p for m, p in c.tap.writes if m == "DELETE" and "controllerrevisions" in p]
        assert len(set(deleted)) == 1  # revision 2 only (a stale cache may ask twice)


async def test_sts_counts_a_name_collision(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        sts = make_set(replicas=1)
        await c.create(sts)
        first = (await c.revisions())[0]
        # Re-create the set: its first revision's name is taken by other data now.
        await c.client.api(StatefulSet, NS).delete("web")
        await c.settle()
        await c.client.api(ControllerRevision, NS).patch(
            str(first.metadata.name),
            {"metadata": {"ownerReferences": None, "labels": {"app": "elsewhere"}}},
        )
        squatter = await c.client.api(ControllerRevision, NS).get(str(first.metadata.name))
        await c.client.api(ControllerRevision, NS).delete(str(first.metadata.name))
        await c.client.api(ControllerRevision, NS).create(
            ControllerRevision(
                metadata=ObjectMeta(name=squatter.metadata.name, labels={"app": "elsewhere"}),
                data={"other": True},
                revision=1,
            )
        )
        for pod in await c.pods():
            await c.delete_pod(str(pod.metadata.name))
        await c.create(sts)
        status = (await c.get()).status
        assert status is not None
        assert status.collision_count == 1
        assert status.update_revision != first.metadata.name
        mine = [r for r in await c.revisions() if get_controller_of(r) is not None]
        assert [r.metadata.name for r in mine] == [status.update_revision]


async def test_sts_adopts_orphan_revisions_and_pods_by_name(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        labels = {"app": "web"}
        orphan_rev = await c.client.api(ControllerRevision, NS).create(
            ControllerRevision(
                metadata=ObjectMeta(
                    name="web-old", labels={**labels, CONTROLLER_REVISION_HASH_LABEL: "old"}
                ),
                data={"spec": {"template": {"$patch": "replace"}}},
                revision=1,
            )
        )
        pods = c.client.api(Pod, NS)
        spec = PodSpec(containers=[Container(name="app", image="nginx:1")])
        await pods.create(Pod(metadata=ObjectMeta(name="web-1", labels=labels), spec=spec))
        await pods.create(Pod(metadata=ObjectMeta(name="web-extra", labels=labels), spec=spec))
        created = await c.create(make_set(replicas=2))
        rev = await c.client.api(ControllerRevision, NS).get(str(orphan_rev.metadata.name))
        assert get_controller_of(rev).uid == created.metadata.uid  # type: ignore[union-attr]
        assert get_controller_of(await c.pod("web-1")).uid == created.metadata.uid  # type: ignore[union-attr]
        assert get_controller_of(await c.pod("web-extra")) is None  # not a name of the set's
        await c.roll_out()
        web1 = await c.pod("web-1")
        assert (web1.metadata.labels or {})[POD_NAME_LABEL] == "web-1"
        assert "Normal SuccessfulUpdate update Pod web-1 in StatefulSet web successful" in (
            c.events("SuccessfulUpdate")
        )
        # the adopted pod had no revision: replaced at the set's revision
        assert "web-1" in c.tap.pod_writes("DELETE")
        assert (await revision_of(c))["web-1"] == (await c.get()).status.update_revision  # type: ignore[union-attr]


async def test_sts_releases_a_pod_that_stops_matching(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2))
        await c.roll_out()
        posts = len(c.tap.pod_writes("POST"))
        await c.client.api(Pod, NS).patch("web-1", {"metadata": {"labels": {"app": "debug"}}})
        await c.settle()
        assert get_controller_of(await c.pod("web-1")) is None
        # The set wants its web-1 back, but the name is taken: as in Go, the create fails
        # with AlreadyExists (no event) and the sync is retried with backoff.
        await c.advance(1)
        assert len(c.tap.pod_writes("POST")) > posts + 1
        assert (
            c.events("SuccessfulCreate").count(
                "Normal SuccessfulCreate create Pod web-1 in StatefulSet web successful"
            )
            == 1
        )
        assert c.events("FailedCreate") == []


async def test_sts_writes_only_status_while_deleting(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        sts = make_set(replicas=3)
        held = StatefulSet(
            metadata=ObjectMeta(name="web", namespace=NS, finalizers=["example.com/hold"]),
            spec=sts.spec,
        )
        await c.create(held)
        await c.client.api(StatefulSet, NS).delete("web", propagation_policy="Orphan")
        await c.settle()
        await c.make_ready("web-0")
        assert await c.pod_names() == ["web-0"]
        status = (await c.get()).status
        assert status is not None
        assert status.ready_replicas == 1


async def test_sts_retries_a_status_write_that_conflicts_on_the_spec(
    api_server: ApiServer,
) -> None:
    conflict = (
        409,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": "Conflict",
            "message": "the object has been modified; please apply your changes",
            "code": 409,
        },
    )
    async with running(api_server) as c:
        c.tap.fail[("PATCH", "/statefulsets/web/status")] = conflict
        await c.create(make_set(replicas=1))
        status = (await c.get()).status
        assert status is not None
        assert status.replicas == 1
        patches = [p for m, p in c.tap.writes if m == "PATCH" and p.endswith("/status")]
        assert len(patches) >= 2

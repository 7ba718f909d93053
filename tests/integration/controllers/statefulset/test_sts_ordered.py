"""OrderedReady and Parallel StatefulSets against the embedded API server: identity, creation
order, scale down, replacement of deleted and Failed pods, minReadySeconds, status."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.controllers.statefulset import POD_NAME_LABEL, REVISION_LABEL
from kcm.models import to_dict
from kcm.models.core_v1 import Pod
from tests.integration.controllers.statefulset.sts_harness import make_set, running

pytestmark = pytest.mark.anyio


async def test_sts_creates_pods_one_at_a_time_in_ordinal_order(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=3))
        assert await c.pod_names() == ["web-0"]
        await c.make_ready("web-0")
        assert await c.pod_names() == ["web-0", "web-1"]
        await c.make_ready("web-1")
        assert await c.pod_names() == ["web-0", "web-1", "web-2"]
        await c.make_ready("web-2")
        status = (await c.get()).status
        assert status is not None
        assert (status.replicas, status.ready_replicas, status.available_replicas) == (3, 3, 3)
        assert (status.current_replicas, status.updated_replicas) == (3, 3)
        assert status.current_revision == status.update_revision
        assert status.observed_generation == 1
        assert status.collision_count == 0
        assert c.tap.pod_writes("POST") == ["pods", "pods", "pods"]
        assert c.events("SuccessfulCreate") == [
            f"Normal SuccessfulCreate create Pod web-{i} in StatefulSet web successful"
            for i in range(3)
        ]


async def test_sts_pods_have_stable_identities(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2))
        await c.roll_out()
        revision = (await c.get()).status.update_revision  # type: ignore[union-attr]
        sts = await c.get()
        for i, pod in enumerate(await c.pods()):
            name = f"web-{i}"
            assert pod.metadata.name == name
            assert pod.metadata.generate_name == "web-"
            assert pod.metadata.labels == {
                "app": "web",
                POD_NAME_LABEL: name,
                REVISION_LABEL: revision,
            }
            assert pod.spec is not None
            assert (pod.spec.hostname, pod.spec.subdomain) == (name, "web")
            (owner,) = pod.metadata.owner_references or ()
            assert (owner.kind, owner.name, owner.uid) == ("StatefulSet", "web", sts.metadata.uid)
            assert owner.controller
            assert owner.block_owner_deletion


async def test_sts_waits_for_a_pod_that_is_not_ready(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=3))
        await c.make_ready("web-0", ready=False)  # Running but not Ready
        assert await c.pod_names() == ["web-0"]
        await c.make_ready("web-0")
        assert await c.pod_names() == ["web-0", "web-1"]


async def test_sts_parallel_creates_and_deletes_all_at_once(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=3, policy="Parallel"))
        assert await c.pod_names() == ["web-0", "web-1", "web-2"]  # none of them ready
        await c.patch_set("web", {"spec": {"replicas": 1}})
        assert await c.pod_names() == ["web-0"]
        assert sorted(c.events("SuccessfulDelete")) == [
            "Normal SuccessfulDelete delete Pod web-1 in StatefulSet web successful",
            "Normal SuccessfulDelete delete Pod web-2 in StatefulSet web successful",
        ]


async def test_sts_scales_down_highest_ordinal_first_once_all_are_healthy(
    api_server: ApiServer,
) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=3))
        await c.roll_out()
        await c.make_ready("web-0", ready=False)
        await c.patch_set("web", {"spec": {"replicas": 1}})
        assert await c.pod_names() == ["web-0", "web-1", "web-2"]  # waits for web-0
        await c.make_ready("web-0")
        assert await c.pod_names() == ["web-0"]
        assert c.tap.pod_writes("DELETE") == ["web-2", "web-1"]
        status = (await c.get()).status
        assert status is not None
        assert (status.replicas, status.ready_replicas, status.observed_generation) == (1, 1, 2)


async def test_sts_scale_down_waits_for_a_terminating_pod(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=3))
        await c.roll_out()
        # A finalizer keeps web-2 terminating (as a kubelet would until its containers stop).
        pods = c.client.api(Pod, "default")
        await pods.patch("web-2", {"metadata": {"finalizers": ["example.com/hold"]}})
        await pods.delete("web-2")
        await c.settle()
        await c.patch_set("web", {"spec": {"replicas": 1}})
        assert await c.pod_names() == ["web-0", "web-1", "web-2"]
        assert c.tap.pod_writes("DELETE") == []
        status = (await c.get()).status
        assert status is not None
        assert (status.replicas, status.current_replicas) == (3, 2)  # terminating: not current
        await pods.patch("web-2", {"metadata": {"finalizers": None}})
        await c.settle()
        assert await c.pod_names() == ["web-0"]
        assert c.tap.pod_writes("DELETE") == ["web-1"]


async def test_sts_recreates_a_deleted_pod_with_its_identity(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2, claims=("data",)))
        await c.roll_out()
        old = await c.pod("web-1")
        await c.delete_pod("web-1")
        new = await c.pod("web-1")
        assert new.metadata.uid != old.metadata.uid
        assert new.spec is not None
        assert old.spec is not None

        # the controller's volumes (not ServiceAccount admission's kube-api-access-<random>)
        def claimed(volumes: Any) -> list[Any]:
            return [v for v in volumes or () if not v.name.startswith("kube-api-access-")]

        assert new.spec.hostname == old.spec.hostname
        assert claimed(new.spec.volumes) == claimed(old.spec.volumes) != []
        assert [p.metadata.name for p in await c.claims()] == ["data-web-0", "data-web-1"]


async def test_sts_recreates_a_failed_pod(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2))
        await c.roll_out()
        old = await c.pod("web-1")
        await c.set_phase("web-1", "Failed")
        new = await c.pod("web-1")
        assert new.metadata.uid != old.metadata.uid
        assert new.status is not None
        assert new.status.phase == "Pending"
        assert c.events("RecreatingFailedPod") == [
            "Warning RecreatingFailedPod StatefulSet default/web is recreating failed Pod web-1"
        ]
        assert c.events("SuccessfulDelete") == [
            "Normal SuccessfulDelete delete Pod web-1 in StatefulSet web successful"
        ]


async def test_sts_min_ready_seconds_holds_the_next_pod_until_available(
    api_server: ApiServer,
) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2, min_ready=10))
        await c.make_ready("web-0")
        assert await c.pod_names() == ["web-0"]
        status = (await c.get()).status
        assert status is not None
        assert (status.ready_replicas, status.available_replicas) == (1, 0)
        await c.advance(10)  # Ready for 10 s: not yet longer than minReadySeconds
        assert await c.pod_names() == ["web-0"]
        await c.advance(2)  # rechecks come minReadySeconds + 1 s after the pod or a sync
        assert await c.pod_names() == ["web-0", "web-1"]
        status = (await c.get()).status
        assert status is not None
        assert status.available_replicas == 1


async def test_sts_acts_at_once_after_a_status_write_that_changed_nothing(
    api_server: ApiServer,
) -> None:
    """A status write the server finds changes nothing comes back with the resourceVersion it
    was based on (kube-apiserver does not bump it): the controller must not then hold the next
    sync waiting for its cache to show a newer version, which never comes (it would recreate
    the pod only after ``STALE_CACHE_MAX_WAIT``)."""
    async with running(api_server) as c:
        await c.create(make_set(replicas=1))
        await c.roll_out()
        unchanged = to_dict(await c.get())
        c.tap.fail[("PATCH", "/statefulsets/web/status")] = (200, unchanged)
        await c.make_ready("web-0", ready=False)  # a status to write; the server "keeps" it
        assert ("PATCH", "/statefulsets/web/status") not in c.tap.fail  # the answer was used
        await c.delete_pod("web-0")  # no time passes on the fake clock
        assert await c.pod_names() == ["web-0"]
        assert c.tap.pod_writes("POST") == ["pods", "pods"]  # created, then created again

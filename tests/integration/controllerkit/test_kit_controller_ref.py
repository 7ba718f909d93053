"""ControllerRefManager against the embedded API server: adopt, release, never fight."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.controllerkit import ControllerRefManager, recheck_deletion_timestamp
from kcm.errors import Conflict, Invalid, NotFound
from kcm.models import Unstructured, resource_info_for
from kcm.models.apps_v1 import ReplicaSet, ReplicaSetSpec
from kcm.models.core_v1 import ConfigMap, Container, Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector as LabelSelectorModel
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.runtime import get_controller_of, new_controller_ref
from kcm.selectors import LabelSelector
from kcm.testing import client_config_for

pytestmark = pytest.mark.anyio

NS = "default"
SELECTOR = LabelSelector.parse("app=web")


def pod(name: str, labels: dict[str, str], *refs: OwnerReference) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, labels=labels, owner_references=list(refs) or None),
        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
    )


def replica_set(name: str = "web", finalizers: list[str] | None = None) -> ReplicaSet:
    labels = {"app": "web"}
    return ReplicaSet(
        metadata=ObjectMeta(name=name, finalizers=finalizers),
        spec=ReplicaSetSpec(
            replicas=1,
            selector=LabelSelectorModel(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="c", image="nginx")]),
            ),
        ),
    )


class Counting:
    """A ``can_adopt`` that records its calls and delegates to a real check."""

    def __init__(self, check: Callable[[], Awaitable[None]]) -> None:
        self.calls = 0
        self._check = check

    async def __call__(self) -> None:
        self.calls += 1
        await self._check()


def manager(
    pods: Api[Pod], rss: Api[ReplicaSet], owner: ReplicaSet, **kwargs: object
) -> tuple[ControllerRefManager[Pod], Counting]:
    name = str(owner.metadata.name)
    check = Counting(recheck_deletion_timestamp(lambda: rss.get(name), owner.metadata.uid))
    return (
        ControllerRefManager(
            pods, owner, "apps/v1", "ReplicaSet", SELECTOR, can_adopt=check, **kwargs
        ),  # type: ignore[arg-type]
        check,
    )


async def test_claim_adopts_keeps_releases_and_ignores(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        other = await rss.create(replica_set("other"))
        ours = new_controller_ref(owner, "apps/v1", "ReplicaSet")
        theirs = new_controller_ref(other, "apps/v1", "ReplicaSet")
        plain = OwnerReference(api_version="v1", kind="ConfigMap", name="cfg", uid="uid-cfg")
        kept = await pods.create(pod("kept", {"app": "web"}, ours))
        orphan = await pods.create(pod("orphan", {"app": "web"}, plain))
        stranger = await pods.create(pod("stranger", {"app": "db"}))
        foreign = await pods.create(pod("foreign", {"app": "web"}, theirs))
        leaving = await pods.create(pod("leaving", {"app": "db"}, plain, ours))

        mgr, check = manager(pods, rss, owner)
        claimed = await mgr.claim([kept, orphan, stranger, foreign, leaving])

        assert [p.metadata.name for p in claimed] == ["kept", "orphan"]
        assert claimed[0] is kept  # no write for what we already own
        assert check.calls == 1
        adopted = await pods.get("orphan")
        # Strategic merge puts the new item first, as kube-apiserver does.
        assert adopted.metadata.owner_references == (ours, plain)
        assert get_controller_of(adopted) == ours
        assert claimed[1].metadata.resource_version == adopted.metadata.resource_version
        released = await pods.get("leaving")
        assert released.metadata.owner_references == (plain,)
        for untouched in (stranger, foreign):
            now = await pods.get(str(untouched.metadata.name))
            assert now.metadata.resource_version == untouched.metadata.resource_version
        # A second claim over the fresh state is a no-op and does not GET the owner again.
        again = await mgr.claim([adopted, released, await pods.get("kept")])
        assert [p.metadata.name for p in again] == ["orphan", "kept"]
        assert check.calls == 1


async def test_recheck_refuses_adoption_by_a_deleting_owner(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        cached = await rss.create(replica_set(finalizers=["example.com/hold"]))
        await rss.delete("web")  # deletionTimestamp set; the cached copy does not know
        orphans = [await pods.create(pod(f"o{i}", {"app": "web"})) for i in range(2)]
        mgr, check = manager(pods, rss, cached)
        with pytest.raises(Conflict, match="has just been deleted") as info:
            await mgr.claim(orphans)
        assert check.calls == 1  # once per manager, not once per orphan
        assert any("may not adopt" in note for note in info.value.__notes__)
        for o in orphans:
            assert (await pods.get(str(o.metadata.name))).metadata.owner_references is None


async def test_recheck_refuses_adoption_by_a_recreated_owner(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        stale = await rss.create(replica_set())
        await rss.delete("web")
        await rss.create(replica_set())  # same name, new uid
        orphan = await pods.create(pod("o", {"app": "web"}))
        mgr, _ = manager(pods, rss, stale)
        with pytest.raises(Conflict, match="is gone"):
            await mgr.claim([orphan])
        assert (await pods.get("o")).metadata.owner_references is None


async def test_a_deleting_owner_keeps_what_it_owns_and_touches_nothing(
    api_server: ApiServer,
) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        await rss.create(replica_set(finalizers=["example.com/hold"]))
        await rss.delete("web")
        owner = await rss.get("web")
        assert owner.metadata.deletion_timestamp is not None
        ours = new_controller_ref(owner, "apps/v1", "ReplicaSet")
        kept = await pods.create(pod("kept", {"app": "web"}, ours))
        mismatched = await pods.create(pod("mismatched", {"app": "db"}, ours))
        orphan = await pods.create(pod("orphan", {"app": "web"}))
        mgr, check = manager(pods, rss, owner)
        assert await mgr.claim([kept, mismatched, orphan]) == [kept]
        assert check.calls == 0
        assert get_controller_of(await pods.get("mismatched")) == ours
        assert (await pods.get("orphan")).metadata.owner_references is None


async def test_deleting_orphans_and_other_namespaces_are_not_adopted(
    api_server: ApiServer,
) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        await pods.create(
            Pod(
                metadata=ObjectMeta(name="dying", labels={"app": "web"}, finalizers=["x/y"]),
                spec=PodSpec(containers=[Container(name="c", image="nginx")]),
            )
        )
        await pods.delete("dying")
        dying = await pods.get("dying")
        elsewhere = Pod(
            metadata=ObjectMeta(name="x", namespace="kube-system", labels={"app": "web"})
        )
        mgr, check = manager(pods, rss, owner)
        assert await mgr.claim([dying, elsewhere]) == []
        assert check.calls == 0


async def test_vanished_children_are_ignored(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        ours = new_controller_ref(owner, "apps/v1", "ReplicaSet")
        orphan = await pods.create(pod("orphan", {"app": "web"}))
        leaving = await pods.create(pod("leaving", {"app": "db"}, ours))
        await pods.delete("orphan")
        await pods.delete("leaving")
        mgr, _ = manager(pods, rss, owner)
        assert await mgr.claim([orphan, leaving]) == []  # NotFound on adopt and release: fine
        with pytest.raises(NotFound):
            await pods.get("orphan")


async def test_a_recreated_child_is_not_adopted_by_its_old_uid(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        stale = await pods.create(pod("p", {"app": "web"}))
        await pods.delete("p")
        other = await rss.create(replica_set("other"))
        await pods.create(
            pod("p", {"app": "web"}, new_controller_ref(other, "apps/v1", "ReplicaSet"))
        )
        mgr, _ = manager(pods, rss, owner)
        with pytest.raises(Invalid, match=r"metadata\.uid"):
            await mgr.claim([stale])  # the patch carries the old uid: immutable, refused (422)
        assert get_controller_of(await pods.get("p")) == new_controller_ref(
            other, "apps/v1", "ReplicaSet"
        )


async def test_several_failures_raise_an_exception_group(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        other = await rss.create(replica_set("other"))
        stale = []
        for name in ("a", "b"):
            stale.append(await pods.create(pod(name, {"app": "web"})))
            await pods.delete(name)
            await pods.create(
                pod(name, {"app": "web"}, new_controller_ref(other, "apps/v1", "ReplicaSet"))
            )
        mgr, _ = manager(pods, rss, owner)
        claimed, errors = await mgr.claim_with_errors(stale)
        assert claimed == []
        assert len(errors) == 2
        with pytest.raises(ExceptionGroup) as info:
            await manager(pods, rss, owner)[0].claim(stale)
        assert len(info.value.exceptions) == 2


async def test_finalizers_ride_along_with_adoption_and_release(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        orphan = await pods.create(pod("orphan", {"app": "web"}))
        mgr, _ = manager(pods, rss, owner, finalizers=["batch.kubernetes.io/job-tracking"])
        [adopted] = await mgr.claim([orphan])
        assert adopted.metadata.finalizers == ("batch.kubernetes.io/job-tracking",)
        relabelled = await pods.patch("orphan", {"metadata": {"labels": {"app": "db"}}})
        mgr, _ = manager(pods, rss, owner, finalizers=["batch.kubernetes.io/job-tracking"])
        assert await mgr.claim([relabelled]) == []
        released = await pods.get("orphan")
        assert not released.metadata.owner_references
        assert not released.metadata.finalizers


async def test_unstructured_children_are_claimed_with_json_patches(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        rss = client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        cms = client.api(Unstructured, NS, resource=resource_info_for(ConfigMap))
        cm_typed = client.api(ConfigMap, NS)
        plain = OwnerReference(api_version="v1", kind="Node", name="n", uid="uid-n")
        await cm_typed.create(
            ConfigMap(
                metadata=ObjectMeta(name="orphan", labels={"app": "web"}, owner_references=[plain])
            )
        )
        orphan = await cms.get("orphan")
        mgr = ControllerRefManager(cms, owner, "apps/v1", "ReplicaSet", SELECTOR, can_adopt=None)
        [adopted] = await mgr.claim([orphan])
        ours = new_controller_ref(owner, "apps/v1", "ReplicaSet")
        assert (await cm_typed.get("orphan")).metadata.owner_references == (plain, ours)
        # Relabel, then release with a JSON patch that keeps the other reference.
        await cm_typed.patch("orphan", {"metadata": {"labels": {"app": "db"}}})
        current = await cms.get("orphan")
        mgr = ControllerRefManager(cms, owner, "apps/v1", "ReplicaSet", SELECTOR, can_adopt=None)
        assert await mgr.claim([current]) == []
        assert (await cm_typed.get("orphan")).metadata.owner_references == (plain,)
        # A stale copy is refused (optimistic concurrency), not silently overwritten:
        # ``adopted`` still says app=web and has the resourceVersion from before the relabel.
        data = adopted.to_dict()
        data["metadata"]["ownerReferences"] = []
        mgr = ControllerRefManager(cms, owner, "apps/v1", "ReplicaSet", SELECTOR, can_adopt=None)
        with pytest.raises(Conflict):
            await mgr.claim([Unstructured.from_dict(data)])
        assert (await cm_typed.get("orphan")).metadata.owner_references == (plain,)


async def test_a_filter_narrows_what_is_claimed(api_server: ApiServer) -> None:
    """StatefulSet's use: only children named ``<owner>-<n>`` are claimed; an owned child that
    fails the filter is released, an orphan that fails it is left alone."""
    async with ApiClient(client_config_for(api_server)) as client:
        pods, rss = client.api(Pod, NS), client.api(ReplicaSet, NS)
        owner = await rss.create(replica_set())
        ours = new_controller_ref(owner, "apps/v1", "ReplicaSet")
        member = await pods.create(pod("web-0", {"app": "web"}))
        stranger = await pods.create(pod("web-extra", {"app": "web"}))
        renamed = await pods.create(pod("other-1", {"app": "web"}, ours))

        mgr, _ = manager(
            pods, rss, owner, filter=lambda p: str(p.metadata.name).startswith("web-0")
        )
        claimed = await mgr.claim([member, stranger, renamed])

        assert [p.metadata.name for p in claimed] == ["web-0"]
        assert get_controller_of(await pods.get("web-0")) == ours
        assert (await pods.get("web-extra")).metadata.owner_references is None
        assert not (await pods.get("other-1")).metadata.owner_references

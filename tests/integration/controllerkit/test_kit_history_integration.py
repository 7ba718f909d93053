"""History against the embedded API server: create (and rename on collision), list, update,
adopt, release and delete ControllerRevisions, reading through a real informer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.controllerkit import (
    CONTROLLER_REVISION_HASH_LABEL,
    History,
    controller_revision_name,
    hash_controller_revision,
    new_controller_revision,
)
from kcm.errors import AlreadyOwnedError, Conflict, NotFound
from kcm.informers import Indexer, Lister, SharedInformerFactory
from kcm.models import resource_info_for
from kcm.models.apps_v1 import ControllerRevision, StatefulSet, StatefulSetSpec
from kcm.models.core_v1 import Container, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector as LabelSelectorModel
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import get_controller_of, new_controller_ref
from kcm.selectors import LabelSelector
from kcm.testing import FakeClock, client_config_for, eventually

pytestmark = pytest.mark.anyio

NS = "default"
STS = resource_info_for(StatefulSet)
LABELS = {"app": "web"}
SELECTOR = LabelSelector.from_labels(LABELS)


def template(image: str) -> dict[str, object]:
    return {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}


class Env:
    def __init__(self, client: ApiClient, factory: SharedInformerFactory) -> None:
        self.client = client
        self.revisions: Api[ControllerRevision] = client.api(ControllerRevision, NS)
        self.lister = factory.lister_for(ControllerRevision)
        self.history = History(client, self.lister)  # conflict retries sleep 10 ms real time

    async def parent(self, name: str = "web") -> StatefulSet:
        return await self.client.api(StatefulSet, NS).create(
            StatefulSet(
                metadata=ObjectMeta(name=name),
                spec=StatefulSetSpec(
                    selector=LabelSelectorModel(match_labels=LABELS),
                    template=PodTemplateSpec(
                        metadata=ObjectMeta(labels=LABELS),
                        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
                    ),
                ),
            )
        )

    async def cached(self, name: str, resource_version: str | None) -> ControllerRevision:
        """The lister's copy once it has caught up with ``resource_version``."""

        def current() -> ControllerRevision | None:
            return self.lister.namespace(NS).get_or_none(name)

        await eventually(
            lambda: (
                (rev := current()) is not None and rev.metadata.resource_version == resource_version
            )
        )
        rev = current()
        assert rev is not None
        return rev


@asynccontextmanager
async def environment(server: ApiServer) -> AsyncIterator[Env]:
    async with ApiClient(client_config_for(server)) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        factory.informer_for(ControllerRevision)
        await tg.start(factory.run)
        yield Env(client, factory)
        tg.cancel_scope.cancel()


async def test_create_names_by_hash_and_returns_an_equal_existing_one(
    api_server: ApiServer,
) -> None:
    async with environment(api_server) as env:
        parent = await env.parent()
        rev = new_controller_revision(parent, STS, LABELS, template("nginx:1"), 1, 0)
        created, count = await env.history.create_controller_revision(parent, rev, 0)
        assert count == 0
        assert created.metadata.name == f"web-{hash_controller_revision(rev, 0)}"
        assert created.metadata.namespace == NS
        assert created.metadata.labels == rev.metadata.labels
        assert created.data == template("nginx:1")
        assert created.revision == 1
        ref = get_controller_of(created)
        assert ref is not None
        assert ref.uid == parent.metadata.uid
        # The same data again: the existing revision is the answer, nothing new is created.
        again, count = await env.history.create_controller_revision(parent, rev, 0)
        assert count == 0
        assert again.metadata.uid == created.metadata.uid
        assert len((await env.revisions.list()).items) == 1


async def test_create_counts_collisions_until_a_name_is_free(api_server: ApiServer) -> None:
    async with environment(api_server) as env:
        parent = await env.parent()
        rev = new_controller_revision(parent, STS, LABELS, template("nginx:2"), 2, 0)
        # Squat on the names for collision counts 0 and 1 with other data.
        for probe in (0, 1):
            squatter = new_controller_revision(parent, STS, LABELS, template("other"), 1, 0)
            name = controller_revision_name("web", hash_controller_revision(rev, probe))
            await env.revisions.create(
                msgspec.structs.replace(
                    squatter, metadata=msgspec.structs.replace(squatter.metadata, name=name)
                )
            )
        created, count = await env.history.create_controller_revision(parent, rev, 0)
        assert count == 2
        assert created.metadata.name == f"web-{hash_controller_revision(rev, 2)}"
        assert created.data == template("nginx:2")
        # As in Go, only the name changes: the hash label keeps the revision's own hash.
        labels = created.metadata.labels or {}
        assert labels[CONTROLLER_REVISION_HASH_LABEL] == hash_controller_revision(rev, 0)


async def test_list_update_adopt_release_delete(api_server: ApiServer) -> None:
    async with environment(api_server) as env:
        parent, other = await env.parent(), await env.parent("db")
        ours = new_controller_revision(parent, STS, LABELS, template("a"), 1, None)
        theirs = new_controller_revision(other, STS, LABELS, template("b"), 1, None)
        orphan = msgspec.structs.replace(
            ours,
            metadata=ObjectMeta(name="orphan", labels=LABELS),
            data=template("c"),
        )
        ours = await env.revisions.create(ours)
        theirs = await env.revisions.create(theirs)
        orphan = await env.revisions.create(orphan)
        await env.cached("orphan", orphan.metadata.resource_version)
        await env.cached(str(theirs.metadata.name), theirs.metadata.resource_version)
        await env.cached(str(ours.metadata.name), ours.metadata.resource_version)
        listed = env.history.list_controller_revisions(parent, SELECTOR)
        assert sorted(str(r.metadata.name) for r in listed) == sorted(
            ["orphan", str(ours.metadata.name)]
        )

        # update: no request when the number is right; a stale copy is retried from the cache
        assert await env.history.update_controller_revision(ours, 1) is ours
        updated = await env.history.update_controller_revision(ours, 5)
        assert updated.revision == 5
        await env.cached(str(ours.metadata.name), updated.metadata.resource_version)
        renumbered = await env.history.update_controller_revision(ours, 7)  # ours is stale
        assert renumbered.revision == 7
        assert (await env.revisions.get(str(ours.metadata.name))).revision == 7

        # adopt an orphan; adopting an owned revision is refused without a request
        adopted = await env.history.adopt_controller_revision(parent, STS, orphan)
        assert get_controller_of(adopted) == new_controller_ref(parent, "apps/v1", "StatefulSet")
        with pytest.raises(AlreadyOwnedError, match="attempt to adopt revision"):
            await env.history.adopt_controller_revision(other, STS, adopted)

        # release: the reference goes; a gone revision releases to None
        released = await env.history.release_controller_revision(parent, adopted)
        assert released is not None
        assert get_controller_of(released) is None
        await env.history.delete_controller_revision(released)
        with pytest.raises(NotFound):
            await env.revisions.get("orphan")
        assert await env.history.release_controller_revision(parent, released) is None
        with pytest.raises(NotFound):
            await env.history.delete_controller_revision(released)


async def test_update_retries_a_conflict_three_times_then_raises(api_server: ApiServer) -> None:
    async with environment(api_server) as env:
        parent = await env.parent()
        rev = await env.revisions.create(
            new_controller_revision(parent, STS, LABELS, template("a"), 1, None)
        )
        await env.revisions.update(rev, msgspec.structs.replace(rev, revision=2))
        clock = FakeClock()
        # A cache that never catches up: every attempt writes from the stale copy.
        history = History(env.client, Lister(Indexer()), clock=clock)
        failed = anyio.Event()

        async def update() -> None:
            with pytest.raises(Conflict):
                await history.update_controller_revision(rev, 3)
            failed.set()

        delays = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(update)
            for _ in range(3):
                await eventually(lambda: clock.pending_sleepers == 1)
                deadline = clock.next_deadline()
                assert deadline is not None
                delays.append(round(deadline - clock.monotonic(), 6))
                await clock.advance(deadline - clock.monotonic())
            with anyio.fail_after(5):
                await failed.wait()
        assert delays == [0.01, 0.05, 0.25]  # client-go's retry.DefaultBackoff, no jitter
        assert (await env.revisions.get(str(rev.metadata.name))).revision == 2

"""The ConfigMapSet example (examples/configmapset) end to end against the embedded API server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import msgspec
import pytest

from examples.configmapset import (
    ConfigMapSet,
    ConfigMapSetReconciler,
    add_to_manager,
)
from examples.configmapset.api import FINALIZER, NAME_LABEL, NAMESPACE_LABEL
from examples.configmapset.main import apply_example
from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ConfigMap, Event, Namespace, ObjectKey, ObjectMeta, OwnerReference
from kcm.runtime import Manager
from kcm.testing import FakeRecorder, client_config_for, eventually

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]


async def stamped_namespaces(client: ApiClient) -> set[str]:
    items = (await client.api(ConfigMap).list(label_selector=NAME_LABEL)).items
    return {cm.metadata.namespace or "" for cm in items}


async def wait_stamped(client: ApiClient, expected: set[str]) -> None:
    async def stamped() -> bool:
        return await stamped_namespaces(client) == expected

    await eventually(stamped)


async def data_is(client: ApiClient, namespace: str, name: str, data: dict[str, str]) -> None:
    async def check() -> bool:
        return (await client.api(ConfigMap, namespace).get(name)).data == data

    await eventually(check)


def ready(cms: ConfigMapSet | None) -> tuple[str | None, int | None, bool]:
    if cms is None or cms.status is None:
        return (None, None, False)
    cond = next((c for c in cms.status.conditions if c.type == "Ready"), None)
    return (
        cond.status if cond else None,
        cms.status.namespace_count,
        cond is not None and cond.observed_generation == cms.metadata.generation,
    )


async def test_configmapset_stamps_tracks_namespaces_and_cleans_up(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        sample = await apply_example(client, out=lambda *_: None)
        ns, name = sample.metadata.namespace or "", sample.metadata.name or ""
        sets = client.api(ConfigMapSet, ns)
        manager = Manager(client)
        add_to_manager(manager)
        lister = manager.factory.lister_for(ConfigMapSet)
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)

            # Stamped into the two team namespaces, Ready with the count, finalizer held.
            await eventually(lambda: ready(lister.get_or_none(ns, name)) == ("True", 2, True))
            assert await stamped_namespaces(client) == {"team-a", "team-b"}
            own = await client.api(ConfigMap, "team-a").get(name)
            other = await client.api(ConfigMap, "team-b").get(name)
            current = await sets.get(name)
            assert FINALIZER in (current.metadata.finalizers or [])
            refs = own.metadata.owner_references or []
            assert [(r.kind, r.name, r.uid, r.controller) for r in refs] == [
                ("ConfigMapSet", name, current.metadata.uid, True)
            ]
            assert other.metadata.owner_references is None  # no cross-namespace owner refs
            assert (other.metadata.labels or {})[NAME_LABEL] == name
            assert own.data == other.data == {"message": "hello from a ConfigMapSet"}

            # A namespace gaining the label gets the ConfigMap; one losing it loses it.
            namespaces = client.api(Namespace)
            sandbox = await namespaces.get("sandbox")
            sandbox_meta = msgspec.structs.replace(sandbox.metadata, labels={"team": "c"})
            await namespaces.update(
                sandbox, msgspec.structs.replace(sandbox, metadata=sandbox_meta)
            )
            await wait_stamped(client, {"team-a", "team-b", "sandbox"})
            team_b = await namespaces.get("team-b")
            await namespaces.update(
                team_b,
                msgspec.structs.replace(
                    team_b, metadata=msgspec.structs.replace(team_b.metadata, labels={})
                ),
            )
            await wait_stamped(client, {"team-a", "sandbox"})
            await eventually(lambda: ready(lister.get_or_none(ns, name)) == ("True", 2, True))

            # A spec change reaches every stamped ConfigMap; a manual edit is reverted.
            current = await sets.get(name)
            spec = msgspec.structs.replace(current.spec, data={"message": "v2"})
            await sets.update(current, msgspec.structs.replace(current, spec=spec))
            await data_is(client, "sandbox", name, {"message": "v2"})
            edited = await client.api(ConfigMap, "team-a").get(name)
            await client.api(ConfigMap, "team-a").update(
                edited, msgspec.structs.replace(edited, data={"message": "tampered"})
            )
            await data_is(client, "team-a", name, {"message": "v2"})

            # Deleting the set: the finalizer deletes the ConfigMaps in other namespaces first.
            await sets.delete(name)

            async def set_gone() -> bool:
                try:
                    await sets.get(name)
                except NotFound:
                    return True
                return False

            await eventually(set_gone)
            left = await stamped_namespaces(client)
            assert "sandbox" not in left  # deleted by the finalizer, not by garbage collection

            # Events were written for the set.
            async def events_written() -> bool:
                events = (await client.api(Event, ns).list()).items
                reasons = {
                    e.reason
                    for e in events
                    if e.involved_object is not None and e.involved_object.name == name
                }
                return {"Stamped", "Ready", "Removed", "CleanedUp"} <= reasons

            await eventually(events_written)
            tg.cancel_scope.cancel()


async def test_a_foreign_configmap_with_the_same_name_makes_the_set_not_ready(
    api_server: ApiServer,
) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        await client.api(Namespace).create(
            Namespace(metadata=ObjectMeta(name="team-x", labels={"team": "x"}))
        )
        await client.api(ConfigMap, "team-x").create(
            ConfigMap(metadata=ObjectMeta(name="greeting"), data={"mine": "yes"})
        )
        sample = await apply_example(client, out=lambda *_: None)
        ns, name = sample.metadata.namespace or "", sample.metadata.name or ""
        manager = Manager(client)
        add_to_manager(manager)
        lister = manager.factory.lister_for(ConfigMapSet)
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            await eventually(lambda: ready(lister.get_or_none(ns, name))[0] == "False")
            foreign = await client.api(ConfigMap, "team-x").get("greeting")
            assert foreign.data == {"mine": "yes"}  # left alone

            async def warned() -> bool:
                events = (await client.api(Event, ns).list()).items
                return any(e.reason == "NameConflict" and e.type == "Warning" for e in events)

            await eventually(warned)
            tg.cancel_scope.cancel()


class Direct:
    """The reconciler on a running informer factory, called by the test (no controller), with
    a ConfigMap cache that never catches up: what a reconcile sees when its cache lags."""

    def __init__(self, client: ApiClient, manager: Manager) -> None:
        self.recorder = FakeRecorder()
        self.reconciler = ConfigMapSetReconciler(client, manager, self.recorder, manager.clock)
        # An informer that never runs: its lister stays empty, as a cache that has not yet
        # seen the ConfigMaps written a moment ago.
        lagging = SharedInformerFactory(client)
        self.reconciler.stamped = lagging.lister_for(ConfigMap, label_selector=NAME_LABEL)
        self.sets = manager.factory.lister_for(ConfigMapSet)


def ours(namespace: str, name: str, set_ns: str, data: dict[str, str], **meta: object) -> ConfigMap:
    labels = {NAME_LABEL: name, NAMESPACE_LABEL: set_ns}
    return ConfigMap(
        metadata=ObjectMeta(name=name, namespace=namespace, labels=labels, **meta),  # type: ignore[arg-type]
        data=data,
    )


async def test_the_finalizer_deletes_configmaps_the_cache_has_not_seen(
    api_server: ApiServer,
) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        sample = await apply_example(client, out=lambda *_: None)
        ns, name = sample.metadata.namespace or "", sample.metadata.name or ""
        key = ObjectKey(ns, name)
        manager = Manager(client)
        direct = Direct(client, manager)
        async with anyio.create_task_group() as tg:
            await tg.start(manager.factory.run)
            await direct.reconciler.reconcile(key)  # finalizer, team-a and team-b stamped
            assert await stamped_namespaces(client) == {"team-a", "team-b"}
            # Stamped just before the deletion (say, by a reconcile that saw sandbox still
            # labelled): not in the (lagging) cache.
            await client.api(ConfigMap, "sandbox").create(
                ours("sandbox", name, ns, {"message": "hello"})
            )
            sets = client.api(ConfigMapSet, ns)
            await sets.delete(name)  # the finalizer holds it

            def deleting() -> bool:
                cached = direct.sets.get_or_none(ns, name)
                return cached is not None and cached.metadata.deletion_timestamp is not None

            await eventually(deleting)
            await direct.reconciler.reconcile(key)
            assert await stamped_namespaces(client) == set()  # nothing leaked

            async def set_gone() -> bool:
                try:
                    await sets.get(name)
                except NotFound:
                    return True
                return False

            await eventually(set_gone)  # the finalizer was removed after the cleanup
            assert "Normal CleanedUp Deleted 3 stamped ConfigMap(s)" in direct.recorder.events
            tg.cancel_scope.cancel()


@pytest.mark.parametrize("existing", ["ours", "foreign", "predecessor"])
async def test_already_exists_reads_the_live_configmap_before_calling_it_a_conflict(
    api_server: ApiServer, existing: str
) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        sample = await apply_example(client, out=lambda *_: None)
        ns, name = sample.metadata.namespace or "", sample.metadata.name or ""
        if existing == "ours":  # created by an earlier reconcile; stale data
            cm = ours("team-a", name, ns, {"message": "old"})
        elif existing == "foreign":  # someone else's, no labels
            cm = ConfigMap(metadata=ObjectMeta(name=name, namespace="team-a"), data={"x": "y"})
        else:  # labelled for a set of that name, but controlled by an earlier one (other uid)
            ref = OwnerReference(
                api_version="examples.kcm.dev/v1alpha1",
                kind="ConfigMapSet",
                name=name,
                uid="00000000-0000-0000-0000-000000000000",
                controller=True,
            )
            cm = ours("team-a", name, ns, {"message": "old"}, owner_references=[ref])
        await client.api(ConfigMap, "team-a").create(cm)
        manager = Manager(client)
        direct = Direct(client, manager)
        async with anyio.create_task_group() as tg:
            await tg.start(manager.factory.run)
            await direct.reconciler.reconcile(ObjectKey(ns, name))
            live = await client.api(ConfigMap, "team-a").get(name)
            conflicts = [e for e in direct.recorder.events if "NameConflict" in e]
            current = await client.api(ConfigMapSet, ns).get(name)
            assert current.status is not None
            if existing == "ours":
                assert conflicts == []
                assert live.data == {"message": "hello from a ConfigMapSet"}  # brought in sync
                assert "Normal Updated Updated ConfigMap team-a/greeting" in direct.recorder.events
                assert current.status.namespace_count == 2
            else:
                assert conflicts == [
                    "Warning NameConflict ConfigMap team-a/greeting exists and is not ours"
                ]
                assert live.data == cm.data  # left alone
                assert current.status.namespace_count == 1
            tg.cancel_scope.cancel()


def test_the_example_runs_in_one_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "examples.configmapset", "--once", "--delete", "--timeout", "30"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Ready=True (2 of 2 namespace(s) have the ConfigMap)" in out
    assert "ConfigMap team-b/greeting (label + finalizer)" in out
    assert "event: Normal Ready" in out
    assert "stamped ConfigMaps left: 0" in out

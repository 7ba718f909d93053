"""Builder watches over unstructured (CRD) and metadata-only informers, on the embedded server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.informers import InformerKey, SharedInformerFactory
from kcm.models import ObjectKey, PartialObjectMetadata, ResourceInfo, Unstructured, from_dict
from kcm.models.apiextensions_v1 import CustomResourceDefinition
from kcm.models.core_v1 import ConfigMap, Namespace, Secret
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.runtime import (
    Controller,
    ControllerBuilder,
    Manager,
    Request,
    Result,
    controller_for,
    enqueue_mapped,
    predicate,
)
from kcm.testing import FakeClock, client_config_for, crd_manifest

pytestmark = pytest.mark.anyio

WIDGET_CRD: dict[str, Any] = crd_manifest(group="example.com", kind="Widget")


class Recorder:
    def __init__(self) -> None:
        self.calls: list[Request] = []
        self._changed = anyio.Event()

    async def reconcile(self, request: Request) -> Result:
        self.calls.append(request)
        self._changed.set()
        return Result()

    async def wait_for(self, request: Request) -> None:
        with anyio.fail_after(5):
            while request not in self.calls:
                self._changed = anyio.Event()
                await self._changed.wait()


@asynccontextmanager
async def cluster() -> AsyncIterator[tuple[ApiClient, ResourceInfo]]:
    async with ApiServer() as server, ApiClient(client_config_for(server)) as client:
        await client.api(CustomResourceDefinition).create(
            from_dict(CustomResourceDefinition, WIDGET_CRD)
        )
        yield client, await client.discover("example.com/v1", "Widget")


@asynccontextmanager
async def running(
    factory: SharedInformerFactory, controller: Controller[ObjectKey]
) -> AsyncIterator[None]:
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(5):
            await tg.start(factory.run)
            await tg.start(controller.run)
        yield
        tg.cancel_scope.cancel()


def widget(name: str, size: int) -> Unstructured:
    return Unstructured.from_dict(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": name},
            "spec": {"size": size},
        }
    )


async def test_unstructured_for_and_metadata_only_owns() -> None:
    async with cluster() as (client, info):
        widgets = client.api(Unstructured, "default", resource=info)
        w1 = await widgets.create(widget("w1", 1))
        await widgets.create(widget("small", 0))
        factory = SharedInformerFactory(client)
        rec = Recorder()
        sizes: list[int] = []

        def big(obj: Unstructured) -> bool:
            sizes.append(obj["spec"]["size"])
            return bool(obj["spec"]["size"])

        def not_ignored(obj: PartialObjectMetadata) -> bool:
            return (obj.metadata.labels or {}).get("ignore") != "yes"

        controller = (
            ControllerBuilder(factory)
            .for_(info, predicates=[predicate(big)])  # Unstructured widgets
            .owns(ConfigMap, metadata_only=True, predicates=[predicate(not_ignored)])
            .build(rec)
        )
        assert controller.name == "widget"
        keys = set(factory.informers())
        assert InformerKey(Unstructured, "example.com/v1/widgets", "", "", "") in keys
        assert InformerKey(PartialObjectMetadata, "v1/configmaps", "", "", "") in keys
        assert not any(k.model is ConfigMap for k in keys)  # no typed ConfigMap cache

        async with running(factory, controller):
            await rec.wait_for(ObjectKey("default", "w1"))  # initial list, unstructured
            assert ObjectKey("default", "small") not in rec.calls  # the predicate saw spec
            assert sorted(sizes) == [0, 1]
            rec.calls.clear()
            owner = OwnerReference(
                api_version="example.com/v1",
                kind="Widget",
                name="w1",
                uid=w1.metadata.uid or "",
                controller=True,
            )
            cms = client.api(ConfigMap, "default")
            await cms.create(
                ConfigMap(
                    metadata=ObjectMeta(
                        name="ignored", owner_references=[owner], labels={"ignore": "yes"}
                    )
                )
            )
            await cms.create(ConfigMap(metadata=ObjectMeta(name="child", owner_references=[owner])))
            await rec.wait_for(ObjectKey("default", "w1"))  # the owner of the child
            assert rec.calls == [ObjectKey("default", "w1")]  # "ignored" was filtered out
            metadata = factory.metadata_informer(ConfigMap).lister().get("default", "child")
            assert isinstance(metadata, PartialObjectMetadata)


async def test_metadata_only_for_and_watches_and_unstructured_owns() -> None:
    async with cluster() as (client, info):
        factory = SharedInformerFactory(client)
        rec = Recorder()
        seen: list[str] = []

        def secret_to_configmap(obj: PartialObjectMetadata) -> list[ObjectKey]:
            seen.append(type(obj).__name__)
            return [ObjectKey(obj.metadata.namespace or "", f"for-{obj.metadata.name}")]

        controller = (
            controller_for(factory, ConfigMap, metadata_only=True)
            .watches(Secret, enqueue_mapped(secret_to_configmap), metadata_only=True)
            .owns(info)  # Unstructured widgets controlled by a ConfigMap
            .build(rec)
        )
        assert controller.name == "configmap"
        async with running(factory, controller):
            cm = await client.api(ConfigMap, "default").create(
                ConfigMap(metadata=ObjectMeta(name="cm"))
            )
            await rec.wait_for(ObjectKey("default", "cm"))
            await client.api(Secret, "default").create(Secret(metadata=ObjectMeta(name="s")))
            await rec.wait_for(ObjectKey("default", "for-s"))
            assert seen == ["PartialObjectMetadata"]
            rec.calls.clear()
            owned = widget("owned", 2).to_dict()
            owned["metadata"]["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": "cm",
                    "uid": cm.metadata.uid,
                    "controller": True,
                }
            ]
            await client.api(Unstructured, "default", resource=info).create(
                Unstructured.from_dict(owned)
            )
            await rec.wait_for(ObjectKey("default", "cm"))


async def test_metadata_only_with_resource_info_and_sync_timeout_names_the_watch() -> None:
    async with cluster() as (client, info):
        factory = SharedInformerFactory(client)
        controller = (
            ControllerBuilder(factory)
            .for_(info, metadata_only=True)
            .with_options(cache_sync_timeout=0.01)
            .build(Recorder())
        )
        assert (
            InformerKey(PartialObjectMetadata, "example.com/v1/widgets", "", "", "")
            in factory.informers()
        )
        # The factory is not running: the handlers never sync, and the error says which.
        with pytest.raises(TimeoutError, match=r"example.com/v1 Widget \(metadata-only\)"):
            await controller.run()


async def test_manager_controller_for_takes_the_builders_sources() -> None:
    async with cluster() as (client, info):
        await client.api(Unstructured, "default", resource=info).create(widget("w", 1))
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="other")))
        await client.api(ConfigMap, "other").create(ConfigMap(metadata=ObjectMeta(name="c")))
        manager = Manager(client, clock=FakeClock())
        widgets, metadata = Recorder(), Recorder()
        sizes: list[int] = []

        def size(obj: Unstructured) -> bool:
            sizes.append(obj["spec"]["size"])
            return True

        manager.add(manager.controller_for(info, predicates=[predicate(size)]).build(widgets))
        manager.add(
            manager.controller_for(ConfigMap, metadata_only=True, namespace="other")
            .named("cm-metadata")
            .build(metadata)
        )
        keys = set(manager.factory.informers())
        assert InformerKey(Unstructured, "example.com/v1/widgets", "", "", "") in keys
        assert InformerKey(PartialObjectMetadata, "v1/configmaps", "other", "", "") in keys
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(5):
                await tg.start(manager.run)
                await widgets.wait_for(ObjectKey("default", "w"))
                await metadata.wait_for(ObjectKey("other", "c"))
            assert sizes == [1]  # the predicate got the Unstructured object
            tg.cancel_scope.cancel()


def test_describe_and_errors_name_the_source() -> None:
    factory = SharedInformerFactory.__new__(SharedInformerFactory)  # never touched
    builder = ControllerBuilder(factory).for_(ConfigMap, metadata_only=True)
    with pytest.raises(ValueError, match=r"already called with ConfigMap \(metadata-only\)"):
        builder.for_(Secret)
    info = ResourceInfo(
        group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True
    )
    builder = ControllerBuilder(factory).for_(info)
    with pytest.raises(ValueError, match=r"example.com/v1 Widget \(unstructured\)"):
        builder.for_(info)

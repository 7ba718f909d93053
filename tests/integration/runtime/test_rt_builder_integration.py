"""The builder end to end: informers on the embedded API server feed a controller over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec
import pytest
from prometheus_client import CollectorRegistry

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap, Secret
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.runtime import (
    Controller,
    ControllerBuilder,
    Request,
    Result,
    controller_for,
    enqueue_mapped,
    enqueue_object,
    label_selector,
)
from kcm.testing import client_config_for

pytestmark = pytest.mark.anyio


class Recorder:
    """Records every key and what the lister held for it; wakes waiters on each call."""

    def __init__(self, factory: SharedInformerFactory) -> None:
        self.lister = factory.lister_for(ConfigMap)
        self.calls: list[tuple[Request, str | None]] = []
        self._changed = anyio.Event()

    async def reconcile(self, request: Request) -> Result:
        try:
            data = self.lister.get(request.namespace, request.name).data or {}
            state = data.get("v")
        except NotFound:
            state = None
        self.calls.append((request, state))
        self._changed.set()
        return Result()

    async def wait_for(self, call: tuple[Request, str | None]) -> None:
        with anyio.fail_after(5):
            while call not in self.calls:
                self._changed = anyio.Event()
                await self._changed.wait()


@asynccontextmanager
async def running(
    factory: SharedInformerFactory, controller: Controller[ObjectKey]
) -> AsyncIterator[None]:
    async with anyio.create_task_group() as tg:
        tg.start_soon(factory.run)
        with anyio.fail_after(5):
            await tg.start(controller.run)
        yield
        tg.cancel_scope.cancel()


def cm(name: str, v: str, **meta: object) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, **meta), data={"v": v})  # type: ignore[arg-type]


async def test_for_reconciles_created_updated_and_deleted_objects(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        api = client.api(ConfigMap, "default")
        await api.create(cm("existing", "0"))
        factory = SharedInformerFactory(client)
        rec = Recorder(factory)
        registry = CollectorRegistry()
        controller = controller_for(factory, ConfigMap, metrics=registry).build(rec)
        assert controller.name == "configmap"
        key = ObjectKey("default", "web")
        async with running(factory, controller):
            await rec.wait_for((ObjectKey("default", "existing"), "0"))  # initial list
            created = await api.create(cm("web", "1"))
            await rec.wait_for((key, "1"))
            changed = cm("web", "2", resource_version=created.metadata.resource_version)
            await api.update(created, changed)
            await rec.wait_for((key, "2"))
            await api.delete("web")
            await rec.wait_for((key, None))
        successes = registry.get_sample_value(
            "controller_runtime_reconcile_total", {"controller": "configmap", "result": "success"}
        )
        assert successes == len(rec.calls)


async def test_event_filter_and_owns(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        cms = client.api(ConfigMap, "default")
        secrets = client.api(Secret, "default")
        factory = SharedInformerFactory(client)
        keys: list[Request] = []
        seen = anyio.Event()

        class Reconciler:
            async def reconcile(self, request: Request) -> Result:
                keys.append(request)
                seen.set()
                return Result()

        controller = (
            ControllerBuilder(factory)
            .for_(Secret)
            .owns(ConfigMap)
            .with_event_filter(label_selector("app=web"))
            .named("secrets")
            .build(Reconciler())
        )
        async with running(factory, controller):
            await secrets.create(Secret(metadata=ObjectMeta(name="ignored")))
            owner = await secrets.create(
                Secret(metadata=ObjectMeta(name="owner", labels={"app": "web"}))
            )
            with anyio.fail_after(5):
                await seen.wait()
            assert keys == [ObjectKey("default", "owner")]
            ref = OwnerReference(
                api_version="v1", kind="Secret", name="owner", uid=owner.metadata.uid,
                controller=True,
            )  # fmt: skip
            seen = anyio.Event()
            await cms.create(cm("child", "1", labels={"app": "web"}, owner_references=[ref]))
            with anyio.fail_after(5):
                await seen.wait()
            assert keys == [ObjectKey("default", "owner")] * 2
            # Filtered out by the event filter, though it names the owner. The next child (same
            # informer, so handled after it) names another owner: once that one is reconciled,
            # a wrongly passed event for "owner" would have been reconciled before it.
            await cms.create(cm("unlabelled-child", "1", owner_references=[ref]))
            ref2 = msgspec.structs.replace(ref, name="owner2")
            seen = anyio.Event()
            await cms.create(cm("child2", "1", labels={"app": "web"}, owner_references=[ref2]))
            with anyio.fail_after(5):
                await seen.wait()
            assert keys == [ObjectKey("default", "owner")] * 2 + [ObjectKey("default", "owner2")]


async def test_watches_with_mapper(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        factory = SharedInformerFactory(client)
        rec = Recorder(factory)

        def to_target(obj: Secret) -> list[ObjectKey]:
            target = (obj.metadata.annotations or {}).get("target")
            return [ObjectKey(obj.metadata.namespace or "", target)] if target else []

        controller = (
            controller_for(factory, ConfigMap)
            .watches(Secret, enqueue_mapped(to_target))
            .with_options(max_concurrent_reconciles=2)
            .build(rec)
        )
        assert controller.max_concurrent_reconciles == 2
        async with running(factory, controller):
            await client.api(Secret, "default").create(
                Secret(metadata=ObjectMeta(name="s", annotations={"target": "mapped"}))
            )
            await rec.wait_for((ObjectKey("default", "mapped"), None))


def test_builder_errors() -> None:
    factory = SharedInformerFactory.__new__(SharedInformerFactory)  # never touched

    class Noop:
        async def reconcile(self, request: Request) -> Result:
            return Result()

    with pytest.raises(ValueError, match="must watch something"):
        ControllerBuilder(factory).named("x").build(Noop())
    with pytest.raises(ValueError, match="owns\\(\\) needs for_"):
        ControllerBuilder(factory).owns(ConfigMap).named("x").build(Noop())
    with pytest.raises(ValueError, match="named\\(\\) or for_"):
        ControllerBuilder(factory).watches(ConfigMap, enqueue_mapped(lambda o: [])).build(Noop())
    with pytest.raises(ValueError, match="already called"):
        ControllerBuilder(factory).for_(ConfigMap).for_(Secret)
    with pytest.raises(KeyError):
        ControllerBuilder(factory).for_(int).build(Noop())  # type: ignore[type-var]


async def test_manual_wiring_and_registration_removed_on_stop(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        factory = SharedInformerFactory(client)
        rec = Recorder(factory)
        controller: Controller[ObjectKey] = Controller("manual", rec)
        informer = factory.informer_for(ConfigMap, namespace="default")
        registration = controller.watch(
            informer, enqueue_object(), predicates=[label_selector("keep")]
        )
        async with running(factory, controller):
            assert registration.has_synced
            await client.api(ConfigMap, "default").create(cm("dropped", "1"))
            await client.api(ConfigMap, "default").create(cm("kept", "1", labels={"keep": "y"}))
            await rec.wait_for((ObjectKey("default", "kept"), "1"))
            assert [key.name for key, _ in rec.calls] == ["kept"]
            assert not registration.removed
        assert registration.removed

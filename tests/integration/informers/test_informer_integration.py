"""Informers against the embedded API server over real HTTP: sync, follow, recover, share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import InternalError, TooManyRequests, WatchDecodeError
from kcm.informers import Backoff, SharedIndexInformer, SharedInformerFactory
from kcm.models import PartialObjectMetadata, Unstructured, from_dict
from kcm.models.apiextensions_v1 import CustomResourceDefinition
from kcm.models.core_v1 import ConfigMap, Namespace
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import client_config_for, crd_manifest, eventually

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def cluster() -> AsyncIterator[tuple[ApiServer, ApiClient]]:
    async with ApiServer() as server, ApiClient(client_config_for(server)) as client:
        yield server, client


def fast_backoff() -> Backoff:
    return Backoff(initial=0.01, cap=0.05)


async def write(op: Callable[[], Awaitable[Any]]) -> Any:
    """Run a write, retrying the faults injected for everyone (the test is a client too)."""
    while True:
        try:
            return await op()
        except (InternalError, TooManyRequests):
            await anyio.sleep(0.01)


async def server_state(client: ApiClient, namespace: str = "default") -> dict[str, str | None]:
    listed = await client.api(ConfigMap, namespace).list()
    return {o.metadata.name or "": o.metadata.resource_version for o in listed.items}


def cache_state(informer: SharedIndexInformer[Any]) -> dict[str, str | None]:
    return {o.metadata.name: o.metadata.resource_version for o in informer.indexer.list()}


@pytest.mark.parametrize("watch_list", [False, True], ids=["list", "watchlist"])
async def test_informer_syncs_follows_and_recovers_from_faults(watch_list: bool) -> None:
    async with cluster() as (server, client):
        api = client.api(ConfigMap, "default")
        for i in range(30):
            await api.create(ConfigMap(metadata=ObjectMeta(name=f"c{i}"), data={"v": "0"}))
        errors: list[Exception] = []
        informer = SharedIndexInformer(
            api,
            watch_list=watch_list,
            backoff=fast_backoff(),
            watch_error_handler=errors.append,
            resource="configmaps",
        )
        seen: list[tuple[str, str]] = []
        informer.add_event_handler(
            on_add=lambda o: seen.append(("add", o.metadata.name)),
            on_update=lambda o, n: seen.append(("update", n.metadata.name)),
            on_delete=lambda o: seen.append(("delete", o.metadata.name)),
        )
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(10):
                await tg.start(informer.run)
            with anyio.fail_after(30):
                assert len(informer.lister().list()) == 30
                # live changes
                c1 = informer.lister().get("default", "c1")
                await api.update(c1, ConfigMap(metadata=c1.metadata, data={"v": "1"}))
                await api.delete("c2")
                await eventually(lambda: ("delete", "c2") in seen)
                # closed watches: re-watch, no relist
                relists = informer.reflector.relists
                server.faults.close_watches()
                await api.create(ConfigMap(metadata=ObjectMeta(name="after-close")))
                await eventually(lambda: ("add", "after-close") in seen)
                assert informer.reflector.relists == relists
                # compaction + closed watch: 410, relist at the last RV
                await api.delete("c3")
                server.faults.compact()
                server.faults.close_watches()
                await api.create(ConfigMap(metadata=ObjectMeta(name="after-compact")))
                await eventually(lambda: ("add", "after-compact") in seen)
                # error bursts
                server.faults.fail_next(3, code=500)
                server.faults.close_watches()
                await write(lambda: api.create(ConfigMap(metadata=ObjectMeta(name="after-500"))))
                await eventually(lambda: ("add", "after-500") in seen)
                # restart: history gone, clients relist
                await server.restart()
                await api.delete("c4")
                await api.create(ConfigMap(metadata=ObjectMeta(name="after-restart")))
                await eventually(lambda: ("add", "after-restart") in seen)
                want = await server_state(client)
                await eventually(lambda: cache_state(informer) == want)
            tg.cancel_scope.cancel()
        assert seen.count(("delete", "c2")) == 1
        assert ("delete", "c3") in seen
        assert ("update", "c1") in seen


async def test_factory_shares_filters_and_projects() -> None:
    async with cluster() as (_, client):
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="other")))
        cms = client.api(ConfigMap, "default")
        await cms.create(ConfigMap(metadata=ObjectMeta(name="web", labels={"app": "web"})))
        await cms.create(ConfigMap(metadata=ObjectMeta(name="db", labels={"app": "db"})))
        await client.api(ConfigMap, "other").create(ConfigMap(metadata=ObjectMeta(name="x")))
        factory = SharedInformerFactory(client)
        everything = factory.informer_for(ConfigMap)
        assert factory.informer_for(ConfigMap) is everything
        web = factory.informer_for(ConfigMap, label_selector="app=web")
        other = factory.informer_for(ConfigMap, namespace="other")
        by_name = factory.informer_for(ConfigMap, field_selector="metadata.name=db")
        meta = factory.metadata_informer(ConfigMap)
        info = await client.discover("v1", "ConfigMap")
        raw = factory.unstructured_informer(info, namespace="default")
        assert len({id(i) for i in factory.informers().values()}) == 6
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(10):
                await tg.start(factory.run)
            assert sorted(o.metadata.name for o in everything.lister().list()) == [
                "db",
                "web",
                "x",
            ]
            assert [o.metadata.name for o in web.lister().list()] == ["web"]
            assert [o.metadata.name for o in other.lister().list()] == ["x"]
            assert [o.metadata.name for o in by_name.lister().list()] == ["db"]
            metas = meta.lister().list()
            assert all(isinstance(o, PartialObjectMetadata) for o in metas)
            assert len(metas) == 3
            got = raw.lister().get("default", "web")
            assert isinstance(got, Unstructured)
            assert got["metadata"]["labels"] == {"app": "web"}
            # an informer requested while running starts by itself
            late = factory.informer_for(ConfigMap, label_selector="app=db")
            with anyio.fail_after(10):
                await late.wait_for_sync()
            assert [o.metadata.name for o in late.lister().list()] == ["db"]
            synced = await factory.wait_for_cache_sync()
            assert all(synced.values())
            assert len(synced) == 7
            tg.cancel_scope.cancel()
        with pytest.raises(RuntimeError, match="shut down"):
            factory.informer_for(ConfigMap, namespace="new")


class MalformedOnce:
    """Wraps the real Api: the first watch stream breaks with a malformed line after one
    event, as a proxy mangling a chunk would."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.broken = False

    async def list(self, **kwargs: Any) -> Any:
        return await self.api.list(**kwargs)

    @asynccontextmanager
    async def watch(self, **kwargs: Any) -> AsyncIterator[AsyncIterator[Any]]:
        async with self.api.watch(**kwargs) as stream:
            if self.broken:
                yield stream
                return

            async def broken() -> AsyncIterator[Any]:
                async for event in stream:
                    yield event
                    self.broken = True
                    raise WatchDecodeError('line is not a watch event: b\'{"type":"MODIF\'')

            yield broken()


async def test_malformed_line_is_reported_and_the_informer_relists_without_loss() -> None:
    async with cluster() as (_, client):
        api = client.api(ConfigMap, "default")
        await api.create(ConfigMap(metadata=ObjectMeta(name="a")))
        errors: list[Exception] = []
        informer = SharedIndexInformer(
            MalformedOnce(api), backoff=fast_backoff(), watch_error_handler=errors.append
        )
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(10):
                await tg.start(informer.run)
                await api.create(ConfigMap(metadata=ObjectMeta(name="b")))  # breaks the stream
                await api.create(ConfigMap(metadata=ObjectMeta(name="c")))  # missed: relisted
                await api.delete("a")
                want = await server_state(client)
                await eventually(lambda: cache_state(informer) == want)
            tg.cancel_scope.cancel()
        assert [type(e) for e in errors] == [WatchDecodeError]
        assert "not a watch event" in str(errors[0])
        assert informer.reflector.relists == 2


WIDGET_CRD: dict[str, Any] = crd_manifest(group="example.com", kind="Widget")


async def test_unstructured_informer_for_a_crd() -> None:
    async with cluster() as (_, client):
        await client.api(CustomResourceDefinition).create(
            from_dict(CustomResourceDefinition, WIDGET_CRD)
        )
        info = await client.discover("example.com/v1", "Widget")
        widgets = client.api(Unstructured, "default", resource=info)
        body = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 3}}
        await widgets.create(Unstructured.from_dict({**body, "metadata": {"name": "w1"}}))
        factory = SharedInformerFactory(client)
        informer = factory.unstructured_informer(info)
        sizes: list[int] = []
        informer.add_event_handler(on_update=lambda old, new: sizes.append(new["spec"]["size"]))
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(10):
                await tg.start(factory.run)
                w1 = informer.lister().get("default", "w1")
                assert isinstance(w1, Unstructured)
                assert w1["spec"]["size"] == 3
                await widgets.patch("w1", {"spec": {"size": 4}})
                await eventually(lambda: sizes == [4])
            tg.cancel_scope.cancel()
        with pytest.raises(TypeError, match="does not support item assignment"):
            w1["spec"]["size"] = 5  # cached objects are immutable

"""Acceptance: kcm.client over real HTTP against the embedded API server (asyncio and trio).

On asyncio the client uses its aiohttp-backed transport, on trio httpx's own; both run here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient, ClientConfig, PatchType, RetryPolicy, load_kubeconfig
from kcm.errors import (
    AlreadyExists,
    Conflict,
    InternalError,
    NotFound,
    RequestTimeout,
    ResourceExpired,
    TransportError,
    Unauthorized,
)
from kcm.models import (
    ConfigMap,
    Container,
    CustomResourceDefinition,
    Deployment,
    DeploymentSpec,
    K8sStruct,
    LabelSelector,
    ObjectMeta,
    Pod,
    PodSpec,
    PodTemplateSpec,
    ResourceInfo,
    Unstructured,
)
from kcm.models.meta_v1 import Status
from kcm.testing import client_config_for, crd_manifest

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def serve(**server_kw: Any) -> AsyncIterator[tuple[ApiServer, ApiClient]]:
    client_kw = server_kw.pop("client_kw", {})
    async with ApiServer(**server_kw) as server:
        config = msgspec.structs.replace(client_config_for(server), qps=-1)
        async with ApiClient(config, **client_kw) as client:
            yield server, client


def configmap(name: str, data: dict[str, str] | None = None, **labels: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, labels=labels or None), data=data)


def pod(name: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name),
        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
    )


async def test_crud_round_trip() -> None:
    async with serve() as (_, client):
        cms = client.api(ConfigMap, namespace="default")
        created = await cms.create(configmap("a", {"k": "1"}, app="x"))
        assert created.metadata.uid
        with pytest.raises(AlreadyExists):
            await cms.create(configmap("a"))
        got = await cms.get("a")
        assert got.data == {"k": "1"}

        replaced = await cms.replace(msgspec.structs.replace(got, data={"k": "2"}))
        assert replaced.data == {"k": "2"}
        with pytest.raises(Conflict):
            await cms.replace(msgspec.structs.replace(got, data={"k": "stale"}))

        merged = await cms.patch("a", {"data": {"extra": "y"}})
        assert merged.data == {"k": "2", "extra": "y"}
        jp = await cms.patch(
            "a", [{"op": "remove", "path": "/data/extra"}], patch_type=PatchType.JSON
        )
        assert jp.data == {"k": "2"}

        await cms.create(configmap("b", app="y"))
        selected = await cms.list(label_selector="app=x")
        assert [c.metadata.name for c in selected.items] == ["a"]
        everywhere = await client.api(ConfigMap).list(field_selector="metadata.name=b")
        assert [(c.metadata.namespace, c.metadata.name) for c in everywhere.items] == [
            ("default", "b")
        ]

        result = await cms.delete("a")
        assert isinstance(result, ConfigMap | Status)
        with pytest.raises(NotFound):
            await cms.get("a")


class GadgetSpec(K8sStruct, frozen=True):
    size: int | None = None


class Gadget(K8sStruct, frozen=True, tag_field="kind", tag="Gadget"):
    """A model that knows less of its objects than the server keeps (a newer server)."""

    api_version: str = "example.com/v1"
    resource_info: ClassVar[ResourceInfo] = ResourceInfo(
        group="example.com", version="v1", kind="Gadget", plural="gadgets", namespaced=True
    )
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: GadgetSpec | None = None


async def test_update_keeps_fields_the_model_does_not_know() -> None:
    """Built-in kinds keep only fields kube-apiserver knows, so a custom resource whose schema
    keeps unknown fields plays the newer server here."""
    async with serve() as (_, client):
        crd = crd_manifest(group="example.com", kind="Gadget")
        await client.api(CustomResourceDefinition).create(
            msgspec.convert(crd, CustomResourceDefinition)
        )
        body = {
            "apiVersion": "example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": "p"},
            "spec": {"size": 1, "futureSpecField": {"keep": True}},
        }
        await client.request("POST", "/apis/example.com/v1/namespaces/default/gadgets", json=body)

        gadgets = client.api(Gadget, namespace="default")
        old = await gadgets.get("p")
        assert b"futureSpecField" not in msgspec.json.encode(old.spec)  # the model drops it
        new = msgspec.structs.replace(
            old, metadata=msgspec.structs.replace(old.metadata, labels={"tier": "web"})
        )
        updated = await gadgets.update(old, new)
        assert updated.metadata.labels == {"tier": "web"}

        path = "/apis/example.com/v1/namespaces/default/gadgets/p"
        raw = (await client.request("GET", path)).json()
        assert raw["spec"]["futureSpecField"] == {"keep": True}

        # old's resourceVersion travels in the patch: a stale read is a 409 Conflict
        with pytest.raises(Conflict):
            await gadgets.update(old, new)


async def test_server_side_apply() -> None:
    async with serve() as (_, client):
        cms = client.api(ConfigMap, namespace="default")
        applied = await cms.apply(configmap("cfg", {"a": "1"}), field_manager="kcm-test")
        assert applied.data == {"a": "1"}
        again = await cms.apply(configmap("cfg", {"a": "2"}), field_manager="kcm-test")
        assert again.data == {"a": "2"}


async def test_list_all_paginates() -> None:
    async with serve() as (_, client):
        cms = client.api(ConfigMap, namespace="pages")
        await client.request("POST", "/api/v1/namespaces", json={"metadata": {"name": "pages"}})
        for i in range(7):
            await cms.create(configmap(f"cm-{i}"))
        first = await cms.list(limit=3)
        assert len(first.items) == 3
        assert first.metadata.continue_
        names = [c.metadata.name async for c in cms.list_all(page_size=3)]
    assert sorted(names) == [f"cm-{i}" for i in range(7)]


async def test_status_and_scale_subresources() -> None:
    async with serve() as (_, client):
        deployments = client.api(Deployment, namespace="default")
        labels = {"app": "web"}
        await deployments.create(
            Deployment(
                metadata=ObjectMeta(name="web"),
                spec=DeploymentSpec(
                    replicas=1,
                    selector=LabelSelector(match_labels=labels),
                    template=PodTemplateSpec(
                        metadata=ObjectMeta(labels=labels),
                        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
                    ),
                ),
            )
        )
        scale = await deployments.get_scale("web")
        assert scale.spec is not None
        assert scale.spec.replicas == 1
        scaled = await deployments.patch_scale("web", {"spec": {"replicas": 3}})
        assert scaled.spec is not None
        assert scaled.spec.replicas == 3
        dep = await deployments.get("web")
        assert dep.spec is not None
        assert dep.spec.replicas == 3

        patched = await deployments.patch_status("web", {"status": {"observedGeneration": 7}})
        assert patched.status is not None
        assert patched.status.observed_generation == 7
        status = await deployments.get_status("web")
        assert status.status is not None
        assert status.status.observed_generation == 7


async def test_delete_collection() -> None:
    async with serve() as (_, client):
        cms = client.api(ConfigMap, namespace="default")
        for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
            await cms.create(configmap(name, app=app))
        await cms.delete_collection(label_selector="app=x")
        left = [c.metadata.name for c in (await cms.list()).items]
        assert "a" not in left
        assert "b" not in left
        assert "c" in left


async def test_watch_events_bookmarks_and_server_timeout() -> None:
    async with serve(bookmark_interval=0.2) as (_, client):
        cms = client.api(ConfigMap, namespace="default")
        start = await cms.create(configmap("first"))
        seen: list[tuple[str, str | None]] = []
        with anyio.fail_after(10):
            # kube sends no bookmarks on a watch of 2 s or less (its last is 2 s before the end)
            async with cms.watch(
                resource_version=start.metadata.resource_version, timeout_seconds=3
            ) as events:
                await cms.create(configmap("second"))
                await cms.delete("first")
                async for ev in events:
                    seen.append((ev.type, ev.object.metadata.name))
                    if ev.type == "BOOKMARK":
                        break
        assert seen[:2] == [("ADDED", "second"), ("DELETED", "first")]
        assert seen[-1][0] == "BOOKMARK"

        # timeoutSeconds: the server ends the stream and the iteration simply ends
        with anyio.fail_after(10):
            async with cms.watch(timeout_seconds=1, allow_watch_bookmarks=False) as events:
                initial = [ev.object.metadata.name async for ev in events]
        assert initial == ["second"]  # no resourceVersion: synthetic ADDED for what exists


async def drain(watch: Any, seen: list[Any] | None = None) -> None:
    async with watch as events:
        async for ev in events:
            if seen is not None:
                seen.append(ev)


async def test_watch_from_compacted_version_raises_resource_expired() -> None:
    async with serve() as (server, client):
        cms = client.api(ConfigMap, namespace="default")
        old = await cms.create(configmap("a"))
        await cms.create(configmap("b"))
        server.faults.compact()
        with anyio.fail_after(10), pytest.raises(ResourceExpired):
            await drain(cms.watch(resource_version=old.metadata.resource_version))


async def test_watch_idle_timeout_over_real_http() -> None:
    async with serve() as (server, client):
        cms = client.api(ConfigMap, namespace="default")
        await cms.create(configmap("a"))
        seen: list[Any] = []
        try:

            async def watch_then_silence() -> None:
                async with cms.watch(idle_timeout=0.3, allow_watch_bookmarks=False) as events:
                    async for ev in events:
                        seen.append(ev)
                        server.faults.partition(client.config.user_agent)  # now silence

            with anyio.fail_after(10), pytest.raises(RequestTimeout, match="idle"):
                await watch_then_silence()
        finally:
            server.faults.heal()
        assert [e.object.metadata.name for e in seen] == ["a"]


async def test_watch_header_timeout_over_real_http() -> None:
    async with serve() as (server, client):
        server.faults.partition(client.config.user_agent)
        try:
            with anyio.fail_after(10), pytest.raises(RequestTimeout, match="headers"):
                await drain(client.api(ConfigMap).watch(idle_timeout=0.3))
        finally:
            server.faults.heal()


async def test_retries_on_injected_failures() -> None:
    fast = RetryPolicy(base_delay=0.001)
    async with serve(client_kw={"retry": fast}) as (server, client):
        cms = client.api(ConfigMap, namespace="default")
        await cms.create(configmap("r"))
        server.faults.fail_next(3, code=500)
        assert (await cms.get("r")).metadata.name == "r"  # GET retried past three 500s
        server.faults.fail_next(2, code=429, retry_after=0)
        assert (await cms.create(configmap("s"))).metadata.name == "s"  # Retry-After: write too
        server.faults.fail_next(1, code=500)
        with pytest.raises(InternalError):
            await cms.create(configmap("t"))  # a write without Retry-After is not retried


async def test_discovery_of_a_custom_resource() -> None:
    crd = crd_manifest(group="example.com", kind="Widget", status=True)
    async with serve() as (_, client):
        await client.api(CustomResourceDefinition).create(
            msgspec.convert(crd, CustomResourceDefinition)
        )
        info = await client.discover("example.com/v1", "Widget")
        assert (info.plural, info.namespaced) == ("widgets", True)
        assert "status" in info.subresources
        widgets = client.api(Unstructured, resource=info, namespace="default")
        widget = Unstructured.from_dict(
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": "w"},
                "spec": {"size": 3, "nested": {"a": [1, 2]}},
            }
        )
        await widgets.create(widget)
        got = await widgets.get("w")
        assert got["spec"]["size"] == 3
        assert got["spec"]["nested"]["a"][1] == 2


async def test_token_auth() -> None:
    async with serve(token="s3cret") as (server, client):
        assert (await client.api(ConfigMap, namespace="default").list()).items == []
        anonymous = ClientConfig(server=server.url, qps=-1)
        async with ApiClient(anonymous) as other:
            with pytest.raises(Unauthorized):
                await other.api(ConfigMap, namespace="default").list()


async def test_tls_and_kubeconfig(tmp_path: Path) -> None:
    async with serve(tls=True, token="t") as (server, client):
        assert server.url.startswith("https://")
        await client.api(ConfigMap, namespace="default").create(configmap("tls"))
        path = server.write_kubeconfig(tmp_path / "kubeconfig")
        config = load_kubeconfig(path)
        assert config.certificate_authority_data
        async with ApiClient(config) as from_file:
            got = await from_file.api(ConfigMap, namespace="default").get("tls")
        assert got.metadata.name == "tls"


async def test_connection_refused_names_the_server() -> None:
    async with ApiServer() as server:
        url = server.url  # closed again: nothing listens there now
    config = ClientConfig(server=url, qps=-1)
    async with ApiClient(config, retry=RetryPolicy(max_tries=2, base_delay=0.001)) as client:
        with pytest.raises(TransportError, match=url.split("//")[1]):
            await client.api(ConfigMap, namespace="default").get("x")


async def test_typed_selector_builders_filter_on_the_server() -> None:
    from kcm.selectors import FieldSelector
    from kcm.selectors import LabelSelector as Selector

    async with serve() as (_, client):
        cms = client.api(ConfigMap, namespace="default")
        await cms.create(configmap("web", app="x", tier="web"))
        await cms.create(configmap("db", app="x", tier="db"))
        await cms.create(configmap("other", app="y"))
        web = await cms.list(label_selector=Selector.eq("app", "x").notin("tier", ["db"]))
        assert [c.metadata.name for c in web.items] == ["web"]
        not_db = await cms.list(field_selector=FieldSelector.parse("metadata.name!=db"))
        assert sorted(c.metadata.name for c in not_db.items) == ["other", "web"]

"""What the client asks for and how it reads it: ``Accept-Encoding: gzip`` as client-go (unless
``disable_compression``), a gzipped body inflated, and the metadata client's ``Accept``
headers for :class:`PartialObjectMetadata` reads."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from kcm.client import ApiClient, load_kubeconfig
from kcm.client._content_encoding import decode_content
from kcm.client._transport import PreloadedBody
from kcm.errors import DecodeError
from kcm.models import PartialObjectMetadata, resource_info_for
from kcm.models.core_v1 import ConfigMap

MakeClient = Callable[..., ApiClient]
PODS_LIST = {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {}, "items": []}
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


def test_decode_content() -> None:
    body = b'{"items":[]}' * 100
    assert decode_content(gzip.compress(body), "gzip") == body
    assert decode_content(zlib.compress(body), "deflate") == body
    raw = zlib.compressobj(wbits=-15)
    assert decode_content(raw.compress(body) + raw.flush(), "deflate") == body
    assert decode_content(body, "identity") == body
    assert decode_content(body, "br") is None
    with pytest.raises(zlib.error):
        decode_content(b"not gzip", "gzip")


@pytest.mark.anyio
async def test_requests_ask_for_gzip_and_watches_do_not(
    make_client: MakeClient, server: Any
) -> None:
    server.add(200, PODS_LIST)
    async with make_client() as client:
        api = client.api(ConfigMap, "default")
        await api.list()
        assert server.last.headers["accept-encoding"] == "gzip"
        server.add(200, b"")
        async with api.watch(resource_version="1") as events:
            async for _ in events:
                pass
        assert server.last.headers["accept-encoding"] == "identity"


@pytest.mark.anyio
async def test_disable_compression(make_client: MakeClient, server: Any) -> None:
    server.add(200, PODS_LIST)
    async with make_client(disable_compression=True) as client:
        await client.api(ConfigMap, "default").list()
    assert "accept-encoding" not in server.last.headers


@pytest.mark.anyio
async def test_a_gzipped_body_is_inflated(make_client: MakeClient, server: Any) -> None:
    """The transport preloads the body (kcm's fast path) and the client inflates it."""
    body = msgspec.json.encode({**PODS_LIST, "items": [{"metadata": {"name": "a"}}]})

    def gzipped(request: httpx.Request) -> httpx.Response:
        headers = {"content-encoding": "gzip", "content-type": "application/json"}
        return httpx.Response(200, headers=headers, stream=PreloadedBody(gzip.compress(body)))

    server.responses.append(gzipped)
    async with make_client() as client:
        listed = await client.api(ConfigMap, "default").list()
    assert [cm.metadata.name for cm in listed.items] == ["a"]

    def corrupt(request: httpx.Request) -> httpx.Response:
        headers = {"content-encoding": "gzip"}
        return httpx.Response(200, headers=headers, stream=PreloadedBody(b"not gzip"))

    server.responses.append(corrupt)
    async with make_client() as client:
        with pytest.raises(DecodeError, match="gzip"):
            await client.api(ConfigMap, "default").list()


@pytest.mark.anyio
async def test_metadata_reads_ask_for_partial_object_metadata(
    make_client: MakeClient, server: Any
) -> None:
    """As client-go's metadata client (less its protobuf first choice); an empty metadata
    list's items are null, as Go sends them."""
    empty = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "items": None}
    server.add(200, {**empty, "metadata": {"resourceVersion": "5"}})
    one = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1"}
    server.add(200, {**one, "metadata": {"name": "a", "namespace": "default"}})
    async with make_client() as client:
        resource = resource_info_for(ConfigMap)
        api = client.api(PartialObjectMetadata, "default", resource=resource)
        listed = await api.list()
        assert server.last.headers["accept"] == METADATA_LIST
        assert (listed.items, listed.metadata.resource_version) == ([], "5")
        got = await api.get("a")
        assert server.last.headers["accept"] == METADATA
        assert (got.kind, got.metadata.name) == ("PartialObjectMetadata", "a")
        server.add(200, b"")
        async with api.watch(resource_version="5") as events:
            async for _ in events:
                pass
        assert server.last.headers["accept"] == METADATA
        # a typed Api asks for plain JSON
        server.add(200, PODS_LIST)
        await client.api(ConfigMap, "default").list()
        assert server.last.headers["accept"] == "application/json"


def test_kubeconfig_disable_compression(write_kubeconfig: Callable[..., Path]) -> None:
    cluster = {"server": "https://a.example:6443", "disable-compression": True}
    path = write_kubeconfig(
        clusters={"c": cluster},
        users={"u": {"token": "t"}},
        contexts={"ctx": {"cluster": "c", "user": "u"}},
        current="ctx",
    )
    assert load_kubeconfig(path).disable_compression is True

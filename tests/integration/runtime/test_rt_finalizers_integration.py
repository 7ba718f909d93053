"""Finalizer helpers against the embedded API server: round trip, no-ops, Conflict, deletion."""

from __future__ import annotations

import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import Conflict, NotFound
from kcm.models import Unstructured, resource_info_for
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import add_finalizer, has_finalizer, remove_finalizer
from kcm.testing import client_config_for

pytestmark = pytest.mark.anyio

F = "example.com/cleanup"


async def test_add_remove_round_trip(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        api = client.api(ConfigMap, "default")
        obj = await api.create(ConfigMap(metadata=ObjectMeta(name="a"), data={"k": "v"}))
        added = await add_finalizer(api, obj, F)
        assert has_finalizer(added, F)
        assert added.metadata.resource_version != obj.metadata.resource_version
        assert (await api.get("a")).metadata.finalizers == (F,)
        removed = await remove_finalizer(api, added, F)
        assert not has_finalizer(removed, F)
        fresh = await api.get("a")
        assert not fresh.metadata.finalizers
        assert fresh.data == {"k": "v"}


async def test_no_op_sends_no_request(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        api = client.api(ConfigMap, "default")
        obj = await add_finalizer(
            api, await api.create(ConfigMap(metadata=ObjectMeta(name="a"))), F
        )
        api_server.faults.fail_next(1, code=500)  # any request now would fail
        assert await add_finalizer(api, obj, F) is obj
        assert await remove_finalizer(api, obj, "example.com/never-added") is obj
        api_server.faults.fail_next(0)
        assert (await api.get("a")).metadata.resource_version == obj.metadata.resource_version


async def test_a_stale_object_gets_conflict(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        api = client.api(ConfigMap, "default")
        stale = await api.create(ConfigMap(metadata=ObjectMeta(name="a")))
        await api.update(stale, msgspec.structs.replace(stale, data={"changed": "yes"}))
        with pytest.raises(Conflict):
            await add_finalizer(api, stale, F)
        assert not (await api.get("a")).metadata.finalizers
        fresh = await add_finalizer(api, await api.get("a"), F)
        assert fresh.metadata.finalizers == (F,)
        assert fresh.data == {"changed": "yes"}


async def test_removing_the_last_finalizer_lets_deletion_finish(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        api = client.api(ConfigMap, "default")
        obj = await add_finalizer(
            api, await api.create(ConfigMap(metadata=ObjectMeta(name="a"))), F
        )
        await api.delete("a")
        deleting = await api.get("a")
        assert deleting.metadata.deletion_timestamp is not None
        await remove_finalizer(api, deleting, F)
        with pytest.raises(NotFound):
            await api.get("a")
        assert obj.metadata.finalizers == (F,)


async def test_unstructured_round_trip(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        typed = client.api(ConfigMap, "default")
        await typed.create(ConfigMap(metadata=ObjectMeta(name="u"), data={"x": "1"}))
        api = client.api(Unstructured, "default", resource=resource_info_for(ConfigMap))
        obj = await api.get("u")
        added = await add_finalizer(api, obj, F)
        assert added.metadata.finalizers == (F,)
        assert (await typed.get("u")).metadata.finalizers == (F,)
        removed = await remove_finalizer(api, added, F)
        assert not removed.metadata.finalizers
        assert (await typed.get("u")).data == {"x": "1"}

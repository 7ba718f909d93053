"""storage-version-gc against the embedded API server: entries of API servers without an
identity Lease are dropped, and a StorageVersion left with none is deleted."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.storageversiongc import StorageVersionGC
from kcm.informers import SharedInformerFactory
from kcm.models import Lease
from kcm.models.internal_v1alpha1 import StorageVersion
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import eventually
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio


async def test_entries_of_gone_servers_are_dropped(api_server: ApiServer) -> None:
    def build(client: ApiClient, factory: SharedInformerFactory) -> StorageVersionGC:
        return StorageVersionGC(client, factory)

    async with running(api_server, build) as env:
        leases: Any = env.client.api(Lease, namespace="kube-system")
        versions: Any = env.client.api(StorageVersion)
        await leases.create(
            Lease(
                metadata=ObjectMeta(
                    name="kube-apiserver-alive", labels={"k8s.io/component": "kube-apiserver"}
                )
            )
        )
        for name, servers in (("apps.deployments", ("alive", "gone")), ("batch.jobs", ("gone",))):
            await versions.create(StorageVersion(metadata=ObjectMeta(name=name), spec={}))
            entries = [
                {"apiServerID": f"kube-apiserver-{s}", "encodingVersion": "v1"} for s in servers
            ]
            await versions.patch_status(name, {"status": {"storageVersions": entries}})

        async def collected() -> bool:
            names = {v.metadata.name for v in (await versions.list()).items}
            if names != {"apps.deployments"}:
                return False
            kept = (await versions.get("apps.deployments")).status
            return [e.api_server_id for e in kept.storage_versions or ()] == [
                "kube-apiserver-alive"
            ] and kept.common_encoding_version == "v1"

        await eventually(collected)

        await leases.delete("kube-apiserver-alive")

        async def emptied() -> bool:
            return not (await versions.list()).items

        await eventually(emptied)

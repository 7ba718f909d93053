"""The three controllers wired through ``add_to_manager`` on one Manager."""

from __future__ import annotations

import anyio
import msgspec
import pytest

import kcm.runtime
from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers import garbagecollector, namespace, podgc
from kcm.models.core_v1 import ConfigMap, Container, Namespace, Pod, PodSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, client_config_for, eventually
from tests.integration.controllers.gc.gc_harness import gone, owner_ref

pytestmark = pytest.mark.anyio


async def test_manager_runs_gc_namespace_and_podgc(api_server: ApiServer) -> None:
    clock = FakeClock()
    config = msgspec.structs.replace(client_config_for(api_server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        manager = kcm.runtime.Manager(client, clock=clock)
        garbagecollector.add_to_manager(manager, workers=2)
        namespace.add_to_manager(manager, workers=2)
        podgc.add_to_manager(manager, terminated_pod_threshold=1)
        await tg.start(manager.run)
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="t")))
        cms = client.api(ConfigMap, "t")
        owner = await cms.create(ConfigMap(metadata=ObjectMeta(name="owner")))
        await cms.create(
            ConfigMap(metadata=ObjectMeta(name="dep", owner_references=[owner_ref(owner)]))
        )
        pods = client.api(Pod, "default")
        for name in ("p1", "p2"):
            await pods.create(
                Pod(
                    metadata=ObjectMeta(name=name),
                    spec=PodSpec(containers=[Container(name="c", image="busybox")]),
                )
            )
            await pods.patch_status(name, {"status": {"phase": "Succeeded"}})
        await cms.delete("owner")

        async def dependent_gone() -> bool:
            return not (await cms.list()).items

        await eventually(dependent_gone)
        await client.api(Namespace).delete("t")

        async def namespace_gone() -> bool:
            await clock.advance(1)  # the namespace delay and PodGC's period run on this clock
            return await gone(client.api(Namespace), "t")

        await eventually(namespace_gone)

        async def one_terminated_pod_left() -> bool:
            await clock.advance(1)
            return len((await pods.list()).items) == 1

        await eventually(one_terminated_pod_left)
        tg.cancel_scope.cancel()

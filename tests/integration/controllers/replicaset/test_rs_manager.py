"""add_to_manager: both controllers run inside a kcm.runtime.Manager and do their job."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers import replicaset, replicationcontroller
from kcm.models.core_v1 import Pod
from kcm.runtime import Manager
from kcm.testing import client_config_for, eventually
from tests.integration.controllers.replicaset.rs_harness import NS, owned_by
from tests.integration.controllers.replicaset.rs_scenarios import RC, RS

pytestmark = pytest.mark.anyio


async def test_add_to_manager_runs_both_controllers(api_server: ApiServer) -> None:
    config = msgspec.structs.replace(client_config_for(api_server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        manager = Manager(client)
        replicaset.add_to_manager(manager)
        replicationcontroller.add_to_manager(manager, workers=2)
        with anyio.fail_after(10):
            await tg.start(manager.run)
        rs = await client.api(RS.model, NS).create(RS.owner("web", 2))
        rc = await client.api(RC.model, NS).create(RC.owner("legacy", 1, labels={"app": "legacy"}))
        pods = client.api(Pod, NS)

        async def both() -> bool:
            items = (await pods.list()).items
            return (
                sum(owned_by(p, rs.metadata.uid) for p in items) == 2
                and sum(owned_by(p, rc.metadata.uid) for p in items) == 1
            )

        await eventually(both)

        def idle() -> bool:
            r = manager.registry
            for n in ("replicaset", "replicationmanager"):  # Go's queue names
                active = r.get_sample_value("controller_runtime_active_workers", {"controller": n})
                # Controller queues carry controller-runtime's labels: name and controller.
                depth = r.get_sample_value("workqueue_depth", {"name": n, "controller": n})
                assert active is not None, f"no controller_runtime_active_workers for {n}"
                assert depth is not None, f"no workqueue_depth sample for {n}"
                if active or depth:
                    return False
            return True

        async def settled() -> bool:
            status = (await client.api(RS.model, NS).get("web")).status
            return status is not None and status.replicas == 2 and idle()

        await eventually(settled)
        assert (
            manager.registry.get_sample_value(
                "controller_runtime_max_concurrent_reconciles",
                {"controller": "replicationmanager"},
            )
            == 2
        )
        tg.cancel_scope.cancel()

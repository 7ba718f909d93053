"""The Deployment controller started the way ``kcm`` starts it: ``add_to_manager`` on a
Manager, next to the ReplicaSet controller; the test plays the kubelet."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers import deployment, replicaset
from kcm.models.apps_v1 import Deployment
from kcm.models.core_v1 import Event
from kcm.runtime import Manager
from kcm.testing import client_config_for, eventually
from tests.integration.controllers.deployment.deploy_harness import (
    NS,
    complete,
    make_deployment,
    mark_pods_ready,
)

pytestmark = pytest.mark.anyio


async def test_deploy_add_to_manager_runs_the_controller(api_server: ApiServer) -> None:
    assert deployment.NAME == "deployment"
    assert deployment.HELP
    assert deployment.DEFAULT_WORKERS == 5
    config = msgspec.structs.replace(client_config_for(api_server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        manager = Manager(client)
        deployment.add_to_manager(manager)
        replicaset.add_to_manager(manager)
        await tg.start(manager.run)
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2))

        async def done() -> bool:
            await mark_pods_ready(client)
            return complete(await api.get("web"))

        await eventually(done, within=20)

        async def event_posted() -> bool:
            events = (await client.api(Event, NS).list()).items
            return any(
                e.reason == "ScalingReplicaSet"
                and e.source is not None
                and e.source.component == "deployment-controller"
                for e in events
            )

        await eventually(event_posted)
        tg.cancel_scope.cancel()

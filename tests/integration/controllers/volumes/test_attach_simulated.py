"""The attach/detach controller with the simulated cluster: the simulated CSI driver attaches,
the simulated kubelet waits for the attachment and reports the volume in use."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.controllerkit import volume_attachment_name
from kcm.controllers.attachdetach import AttachDetachController
from kcm.models import Node
from kcm.models.storage_v1 import CSIDriver, CSINode, VolumeAttachment
from kcm.simulation import ATTACHER_FINALIZER, CSI_DRIVER_NAME
from kcm.testing import eventually
from tests.integration.controllers.volumes.test_attach_detach import bound_csi_volume, pod
from tests.integration.simulation.sim_harness import phase, running_sim

pytestmark = pytest.mark.anyio

NODE = "kcm-node-1"
UNIQUE = f"kubernetes.io/csi/{CSI_DRIVER_NAME}^h-data"


async def test_a_pod_starts_once_its_volume_is_attached(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=1) as sim:
        client = sim.client
        controller = AttachDetachController(client, sim.factory, clock=sim.clock)
        attachments: Any = client.api(VolumeAttachment)
        nodes: Any = client.api(Node)
        async with anyio.create_task_group() as tg:
            driver = await client.api(CSIDriver).get(CSI_DRIVER_NAME)
            assert driver.spec.attach_required is True

            async def registered() -> bool:
                names = {n.metadata.name for n in (await client.api(CSINode).list()).items}
                return NODE in names

            await eventually(registered)
            await bound_csi_volume(client, "data", driver=CSI_DRIVER_NAME)
            await sim.pods.create(pod("user", "data", NODE))
            await sim.clock.advance(1)  # the simulation's pod start delay
            await sim.quiesce()
            assert phase(await sim.pods.get("user")) in (None, "Pending")  # nothing attached

            await tg.start(controller.run)
            name = volume_attachment_name("h-data", CSI_DRIVER_NAME, NODE)

            async def running() -> bool:
                return phase(await sim.pods.get("user")) == "Running"

            await eventually(running)
            made = await attachments.get(name)
            assert made.status.attached is True
            assert made.metadata.finalizers == (ATTACHER_FINALIZER,)

            async def reported() -> bool:
                status = (await nodes.get(NODE)).status
                attached = [v.name for v in status.volumes_attached or ()]
                return attached == [UNIQUE] and list(status.volumes_in_use or ()) == [UNIQUE]

            await eventually(reported)

            await sim.pods.delete("user")

            async def detached() -> bool:
                gone = name not in {a.metadata.name for a in (await attachments.list()).items}
                status = (await nodes.get(NODE)).status
                return gone and not status.volumes_in_use and not status.volumes_attached

            await eventually(detached)
            with pytest.raises(Exception):
                await sim.pods.get("user")
            tg.cancel_scope.cancel()

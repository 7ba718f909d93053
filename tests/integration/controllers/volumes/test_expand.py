"""Growing a claim: the expand controller's ExternalExpanding event, and the simulated CSI
driver's resizer growing the PV and the claim's capacity."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.controllers.expand import ExpandController
from kcm.models.core_v1 import PersistentVolume, PersistentVolumeClaim
from kcm.models.meta_v1 import ObjectMeta
from kcm.models.storage_v1 import StorageClass
from kcm.simulation import CSI_DRIVER_NAME
from kcm.testing import FakeRecorder, eventually
from tests.integration.controllers.volumes.test_attach_detach import NS, bound_csi_volume
from tests.integration.simulation.sim_harness import running_sim

pytestmark = pytest.mark.anyio

IGNORING = (
    "Warning ExternalExpanding Ignoring the PVC: didn't find a plugin capable of expanding the "
    "volume; waiting for an external controller to process this PVC."
)


async def test_a_grown_claim_is_left_to_the_resizer_which_grows_it(
    api_server: ApiServer,
) -> None:
    recorder = FakeRecorder()
    async with running_sim(api_server, nodes=0) as sim:
        client = sim.client
        controller = ExpandController(client, sim.factory, recorder=recorder, clock=sim.clock)
        await client.api(StorageClass).create(
            StorageClass(
                metadata=ObjectMeta(name="grows"),
                provisioner=CSI_DRIVER_NAME,
                allow_volume_expansion=True,
            )
        )
        claims: Any = client.api(PersistentVolumeClaim, NS)
        async with anyio.create_task_group() as tg:
            await tg.start(controller.run)
            await bound_csi_volume(client, "data", driver=CSI_DRIVER_NAME, storage_class="grows")
            await claims.patch_status("data", {"status": {"capacity": {"storage": "1Gi"}}})
            await claims.patch("data", {"spec": {"resources": {"requests": {"storage": "3Gi"}}}})

            async def grown() -> bool:
                claim = await claims.get("data")
                pv = await client.api(PersistentVolume).get("pv-data")
                return (claim.status.capacity or {}).get("storage") == "3Gi" and (
                    pv.spec.capacity or {}
                ).get("storage") == "3Gi"

            await eventually(grown)
            await eventually(lambda: IGNORING in recorder.events)
            tg.cancel_scope.cancel()


async def test_a_claim_within_its_capacity_is_left_alone(api_server: ApiServer) -> None:
    recorder = FakeRecorder()
    async with running_sim(api_server, nodes=0) as sim:
        controller = ExpandController(sim.client, sim.factory, recorder=recorder, clock=sim.clock)
        claims: Any = sim.client.api(PersistentVolumeClaim, NS)
        async with anyio.create_task_group() as tg:
            await tg.start(controller.run)
            await bound_csi_volume(sim.client, "same", driver="other.example.com")
            await claims.patch_status("same", {"status": {"capacity": {"storage": "1Gi"}}})
            await controller.controller.wait_idle()
            assert recorder.events == []
            tg.cancel_scope.cancel()

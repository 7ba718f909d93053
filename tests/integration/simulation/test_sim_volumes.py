"""Pods with PersistentVolumeClaims in the simulated cluster: the scheduler's volume binding,
the simulated provisioner and the default StorageClass, with the PV binder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.persistentvolume import PersistentVolumeBinder
from kcm.controllers.pvcprotection import PVCProtectionController
from kcm.controllers.pvprotection import PVProtectionController
from kcm.controllers.statefulset import StatefulSetController
from kcm.informers import SharedInformerFactory
from kcm.models import LabelSelector, ObjectMeta, Pod, PodTemplateSpec
from kcm.models.apps_v1 import StatefulSet, StatefulSetSpec
from kcm.models.core_v1 import (
    LocalVolumeSource,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    PersistentVolumeSpec,
    Volume,
    VolumeNodeAffinity,
    VolumeResourceRequirements,
)
from kcm.models.storage_v1 import StorageClass
from kcm.simulation import SIMULATED_DRIVER, SimulatedCluster, SimulationConfig
from kcm.testing import FakeClock, FakeRecorder, client_config_for, eventually
from tests.integration.simulation.sim_harness import phase, pod

pytestmark = pytest.mark.anyio

NS = "default"


@asynccontextmanager
async def cluster(server: ApiServer) -> AsyncIterator[tuple[ApiClient, FakeRecorder]]:
    """The simulated cluster with the PV binder, both protection controllers and the
    StatefulSet controller."""
    clock = FakeClock()
    recorder = FakeRecorder()
    async with ApiClient(client_config_for(server)) as client:
        factory = SharedInformerFactory(client, clock=clock)
        sim = SimulatedCluster(
            client,
            factory,
            config=SimulationConfig(nodes=2, pod_start_delay=0, pod_ready_delay=0),
            clock=clock,
            scheduler_recorder=recorder,
            provisioner_recorder=recorder,
        )
        runnables: list[Any] = [
            PersistentVolumeBinder(client, factory, recorder=recorder, clock=clock),
            StatefulSetController(client, factory, recorder=recorder, clock=clock),
            PVCProtectionController(client, factory),
            PVProtectionController(client, factory),
        ]
        async with anyio.create_task_group() as tg:
            tg.start_soon(factory.run)
            with anyio.fail_after(10):
                await tg.start(sim.run)
                for runnable in runnables:
                    await tg.start(runnable.run)
            yield client, recorder
            tg.cancel_scope.cancel()


def claim(name: str, storage_class: str | None = None) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name),
        spec=PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=VolumeResourceRequirements(requests={"storage": "1Gi"}),
            storage_class_name=storage_class,
        ),
    )


def user(name: str, claim_name: str) -> Pod:
    source = PersistentVolumeClaimVolumeSource(claim_name=claim_name)
    return pod(name, volumes=[Volume(name="data", persistent_volume_claim=source)])


async def test_a_claim_of_the_default_class_is_provisioned_on_the_pods_node(
    api_server: ApiServer,
) -> None:
    async with cluster(api_server) as (client, recorder):
        standard = await client.api(StorageClass).get("standard")
        assert standard.provisioner == SIMULATED_DRIVER
        assert standard.volume_binding_mode == "WaitForFirstConsumer"
        assert standard.allow_volume_expansion is True
        claims: Any = client.api(PersistentVolumeClaim, NS)
        made = await claims.create(claim("data"))
        assert made.spec.storage_class_name == "standard"  # DefaultStorageClass admission
        pods: Any = client.api(Pod, NS)
        await pods.create(user("app", "data"))

        async def scheduled() -> bool:
            return bool((await pods.get("app")).spec.node_name)

        # (bound, not Running: a CSI volume is also attached before its pod starts, which is
        # the attachdetach controller's part, not run here)
        await eventually(scheduled)
        node = (await pods.get("app")).spec.node_name
        bound = await claims.get("data")
        assert bound.status.phase == "Bound"
        assert bound.metadata.annotations["volume.kubernetes.io/selected-node"] == node
        volume = await client.api(PersistentVolume).get(f"pvc-{bound.metadata.uid}")
        assert bound.spec.volume_name == volume.metadata.name
        assert volume.spec.csi.driver == SIMULATED_DRIVER
        assert volume.spec.persistent_volume_reclaim_policy == "Delete"
        [term] = volume.spec.node_affinity.required.node_selector_terms
        assert term.match_expressions[0].values == (node,)
        provisioned = [e for e in recorder.events if e.startswith("Normal Provisioning")]
        assert provisioned == [
            "Normal Provisioning External provisioner is provisioning volume for claim "
            '"default/data"',
            f"Normal ProvisioningSucceeded Successfully provisioned volume {volume.metadata.name}",
        ]

        await pods.delete("app", grace_period_seconds=0)
        await claims.delete("data")

        async def volume_gone() -> bool:
            names = {v.metadata.name for v in (await client.api(PersistentVolume).list()).items}
            return volume.metadata.name not in names

        await eventually(volume_gone)


async def test_an_unbound_immediate_claim_keeps_its_pod_pending(api_server: ApiServer) -> None:
    async with cluster(api_server) as (client, recorder):
        claims: Any = client.api(PersistentVolumeClaim, NS)
        await claims.create(claim("nowhere", storage_class=""))
        await client.api(Pod, NS).create(user("stuck", "nowhere"))
        message = (
            "Warning FailedScheduling 0/2 nodes are available: pod has unbound immediate "
            "PersistentVolumeClaims."
        )
        await eventually(lambda: message in recorder.events)


async def test_a_stateful_set_gets_a_provisioned_volume_per_pod(api_server: ApiServer) -> None:
    """Each pod is bound to a node once its claim is Bound to a volume provisioned there."""
    async with cluster(api_server) as (client, _):
        template = user("unused", "unused")
        assert template.spec is not None
        web = StatefulSet(
            metadata=ObjectMeta(name="web"),
            spec=StatefulSetSpec(
                replicas=3,
                pod_management_policy="Parallel",
                service_name="web",
                selector=LabelSelector(match_labels={"app": "web"}),
                template=PodTemplateSpec(
                    metadata=ObjectMeta(labels={"app": "web"}),
                    spec=msgspec.structs.replace(template.spec, volumes=None),
                ),
                volume_claim_templates=[claim("data")],
            ),
        )
        await client.api(StatefulSet, NS).create(web)
        pods: Any = client.api(Pod, NS)
        claims: Any = client.api(PersistentVolumeClaim, NS)

        async def all_scheduled() -> bool:
            found = (await pods.list()).items
            return len(found) == 3 and all(p.spec.node_name for p in found)

        await eventually(all_scheduled)
        volumes = {v.metadata.name: v for v in (await client.api(PersistentVolume).list()).items}
        for ordinal in range(3):
            bound = await claims.get(f"data-web-{ordinal}")
            node = (await pods.get(f"web-{ordinal}")).spec.node_name
            assert bound.status.phase == "Bound"
            volume = volumes[bound.spec.volume_name]
            assert volume.status.phase == "Bound"
            [term] = volume.spec.node_affinity.required.node_selector_terms
            assert term.match_expressions[0].values == (node,)


async def test_a_local_volume_pins_its_pod_to_the_volumes_node(api_server: ApiServer) -> None:
    async with cluster(api_server) as (client, _):
        await client.api(StorageClass).create(
            StorageClass(
                metadata=ObjectMeta(name="local"),
                provisioner="kubernetes.io/no-provisioner",
                volume_binding_mode="WaitForFirstConsumer",
            )
        )
        pinned = VolumeNodeAffinity(
            required=NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(
                        match_expressions=[
                            NodeSelectorRequirement(
                                key="kubernetes.io/hostname", operator="In", values=["kcm-node-2"]
                            )
                        ]
                    )
                ]
            )
        )
        await client.api(PersistentVolume).create(
            PersistentVolume(
                metadata=ObjectMeta(name="disk-2"),
                spec=PersistentVolumeSpec(
                    capacity={"storage": "10Gi"},
                    access_modes=["ReadWriteOnce"],
                    storage_class_name="local",
                    local=LocalVolumeSource(path="/mnt/disk"),
                    node_affinity=pinned,
                ),
            )
        )
        claims: Any = client.api(PersistentVolumeClaim, NS)
        await claims.create(claim("local-data", storage_class="local"))
        pods: Any = client.api(Pod, NS)
        await pods.create(user("db", "local-data"))

        async def running() -> bool:
            return phase(await pods.get("db")) == "Running"

        await eventually(running)
        assert (await pods.get("db")).spec.node_name == "kcm-node-2"
        bound = await claims.get("local-data")
        assert (bound.status.phase, bound.spec.volume_name) == ("Bound", "disk-2")
        assert "volume.kubernetes.io/selected-node" not in (bound.metadata.annotations or {})

"""PV and PVC protection and ephemeral volume claims against the embedded API server."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient, PatchType
from kcm.controllers.ephemeralvolume import EphemeralVolumeController
from kcm.controllers.pvcprotection import PVC_PROTECTION_FINALIZER, PVCProtectionController
from kcm.controllers.pvprotection import PV_PROTECTION_FINALIZER, PVProtectionController
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import (
    Container,
    EphemeralVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimTemplate,
    PersistentVolumeClaimVolumeSource,
    PersistentVolumeSpec,
    Pod,
    PodSpec,
    Volume,
    VolumeResourceRequirements,
)
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeRecorder, eventually
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio

NS = "default"
STORAGE = VolumeResourceRequirements(requests={"storage": "1Gi"})


def claim(name: str) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name),
        spec=PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"], resources=STORAGE),
    )


def pod(name: str, *volumes: Volume, node: str | None = "node-1") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name),
        spec=PodSpec(
            node_name=node,
            containers=[Container(name="c", image="busybox")],
            volumes=list(volumes),
        ),
    )


def claim_volume(claim_name: str) -> Volume:
    return Volume(
        name="data",
        persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim_name),
    )


def ephemeral_volume(name: str = "scratch") -> Volume:
    template = PersistentVolumeClaimTemplate(
        metadata=ObjectMeta(labels={"kind": "scratch"}),
        spec=PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"], resources=STORAGE),
    )
    return Volume(name=name, ephemeral=EphemeralVolumeSource(volume_claim_template=template))


async def gone(api: Any, name: str) -> bool:
    return name not in {o.metadata.name for o in (await api.list()).items}


async def test_a_claim_in_use_is_kept_until_its_pod_goes(api_server: ApiServer) -> None:
    def protection(client: ApiClient, factory: SharedInformerFactory) -> PVCProtectionController:
        return PVCProtectionController(client, factory)

    async with running(api_server, protection) as env:
        claims: Any = env.client.api(PersistentVolumeClaim, NS)
        pods: Any = env.client.api(Pod, NS)
        created = await claims.create(claim("data"))
        assert created.metadata.finalizers == (PVC_PROTECTION_FINALIZER,)  # admission's
        await pods.create(pod("user", claim_volume("data")))
        await pods.create(pod("pending", claim_volume("data"), node=None))  # does not count
        await claims.delete("data")
        await env.quiesce()
        held = await claims.get("data")
        assert held.metadata.deletion_timestamp is not None
        assert held.metadata.finalizers == (PVC_PROTECTION_FINALIZER,)
        await pods.delete("user", grace_period_seconds=0)
        await eventually(lambda: gone(claims, "data"))


async def test_a_missing_claim_finalizer_is_added_back(api_server: ApiServer) -> None:
    def protection(client: ApiClient, factory: SharedInformerFactory) -> PVCProtectionController:
        return PVCProtectionController(client, factory)

    async with running(api_server, protection) as env:
        claims: Any = env.client.api(PersistentVolumeClaim, NS)
        await claims.create(claim("bare"))
        await claims.patch(
            "bare", [{"op": "remove", "path": "/metadata/finalizers"}], patch_type=PatchType.JSON
        )

        async def protected() -> bool:
            return (await claims.get("bare")).metadata.finalizers == (PVC_PROTECTION_FINALIZER,)

        await eventually(protected)


async def test_a_bound_volume_is_kept_until_released(api_server: ApiServer) -> None:
    def protection(client: ApiClient, factory: SharedInformerFactory) -> PVProtectionController:
        return PVProtectionController(client, factory)

    async with running(api_server, protection) as env:
        volumes: Any = env.client.api(PersistentVolume)
        await volumes.create(
            PersistentVolume(
                metadata=ObjectMeta(name="pv-1"),
                spec=PersistentVolumeSpec(
                    capacity={"storage": "1Gi"},
                    access_modes=["ReadWriteOnce"],
                    host_path={"path": "/tmp/pv-1"},
                ),
            )
        )
        await volumes.patch_status("pv-1", {"status": {"phase": "Bound"}})
        await volumes.delete("pv-1")
        await env.quiesce()
        held = await volumes.get("pv-1")
        assert held.metadata.finalizers == (PV_PROTECTION_FINALIZER,)
        await volumes.patch_status("pv-1", {"status": {"phase": "Released"}})
        await eventually(lambda: gone(volumes, "pv-1"))


async def test_an_ephemeral_volume_gets_a_claim_owned_by_its_pod(api_server: ApiServer) -> None:
    recorder = FakeRecorder()

    def ephemeral(client: ApiClient, factory: SharedInformerFactory) -> EphemeralVolumeController:
        return EphemeralVolumeController(client, factory, recorder=recorder)

    async with running(api_server, ephemeral) as env:
        claims: Any = env.client.api(PersistentVolumeClaim, NS)
        pods: Any = env.client.api(Pod, NS)
        owner = await pods.create(pod("worker", ephemeral_volume(), node=None))

        async def created() -> bool:
            return not await gone(claims, "worker-scratch")

        await eventually(created)
        made = await claims.get("worker-scratch")
        [ref] = made.metadata.owner_references
        assert (ref.kind, ref.name, ref.uid, ref.controller) == (
            "Pod",
            "worker",
            owner.metadata.uid,
            True,
        )
        assert ref.block_owner_deletion is True
        assert made.metadata.labels == {"kind": "scratch"}
        assert made.spec.resources.requests == {"storage": "1Gi"}

        await claims.create(claim("squatter-scratch"))
        await pods.create(pod("squatter", ephemeral_volume(), node=None))
        warning = (
            "Warning FailedBinding ephemeral volume scratch: PVC default/squatter-scratch was "
            "not created for pod default/squatter (pod is not owner)"
        )
        await eventually(lambda: warning in recorder.events)

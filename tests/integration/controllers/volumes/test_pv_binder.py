"""The PersistentVolume binder against the embedded API server: static binding, pre-binding,
waiting claims, provisioning hand-off and reclaim policies."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.persistentvolume import PersistentVolumeBinder
from kcm.controllers.pvcprotection import PVCProtectionController
from kcm.controllers.pvprotection import PVProtectionController
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import (
    Container,
    HostPathVolumeSource,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    PersistentVolumeSpec,
    Pod,
    PodSpec,
    Volume,
    VolumeResourceRequirements,
)
from kcm.models.meta_v1 import ObjectMeta
from kcm.models.storage_v1 import StorageClass
from kcm.testing import FakeClock, FakeRecorder, eventually
from tests.integration.controllers.serviceaccounts.sa_harness import Env, running

pytestmark = pytest.mark.anyio

NS = "default"


def volume(
    name: str, size: str, *, policy: str = "Retain", path: str = "/data"
) -> PersistentVolume:
    return PersistentVolume(
        metadata=ObjectMeta(name=name),
        spec=PersistentVolumeSpec(
            capacity={"storage": size},
            access_modes=["ReadWriteOnce"],
            host_path=HostPathVolumeSource(path=f"{path}/{name}"),
            persistent_volume_reclaim_policy=policy,
        ),
    )


def claim(
    name: str, size: str = "1Gi", *, storage_class: str | None = "", volume_name: str | None = None
) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name),
        spec=PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=VolumeResourceRequirements(requests={"storage": size}),
            storage_class_name=storage_class,
            volume_name=volume_name,
        ),
    )


def binder_on(recorder: FakeRecorder, clock: FakeClock) -> Any:
    """The binder's builder for ``running``, on ``clock`` (its resync comes when it moves)."""

    def binder(client: ApiClient, factory: SharedInformerFactory) -> PersistentVolumeBinder:
        return PersistentVolumeBinder(client, factory, recorder=recorder, clock=clock)

    return binder


def binder_stack(recorder: FakeRecorder) -> list[Any]:
    # the clock never moves: the resync never comes, every sync here is an event's
    binder = binder_on(recorder, FakeClock())

    def pvc_protection(client: ApiClient, factory: SharedInformerFactory) -> Any:
        return PVCProtectionController(client, factory)

    def pv_protection(client: ApiClient, factory: SharedInformerFactory) -> Any:
        return PVProtectionController(client, factory)

    return [binder, pvc_protection, pv_protection]


async def phase_of(api: Any, name: str) -> str | None:
    try:
        found = await api.get(name)
    except Exception:
        return None
    return found.status.phase if found.status else None


async def wait_phase(api: Any, name: str, phase: str) -> None:
    async def reached() -> bool:
        return await phase_of(api, name) == phase

    await eventually(reached)


def apis(env: Env) -> tuple[Any, Any]:
    return env.client.api(PersistentVolume), env.client.api(PersistentVolumeClaim, NS)


async def test_a_claim_binds_to_the_smallest_volume_that_fits(api_server: ApiServer) -> None:
    recorder = FakeRecorder()
    async with running(api_server, *binder_stack(recorder)) as env:
        volumes, claims = apis(env)
        for name, size in (("small", "500Mi"), ("big", "5Gi"), ("fit", "2Gi")):
            await volumes.create(volume(name, size))
        await claims.create(claim("data", "1Gi"))
        await wait_phase(claims, "data", "Bound")
        bound = await claims.get("data")
        assert bound.spec.volume_name == "fit"
        assert bound.metadata.annotations == {
            "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes",
        }
        assert bound.status.capacity == {"storage": "2Gi"}
        assert bound.status.access_modes == ("ReadWriteOnce",)
        await wait_phase(volumes, "fit", "Bound")
        fit = await volumes.get("fit")
        assert fit.metadata.annotations == {"pv.kubernetes.io/bound-by-controller": "yes"}
        ref = fit.spec.claim_ref
        assert (ref.kind, ref.namespace, ref.name, ref.uid) == (
            "PersistentVolumeClaim",
            NS,
            "data",
            bound.metadata.uid,
        )
        await wait_phase(volumes, "big", "Available")
        await wait_phase(volumes, "small", "Available")


async def test_pre_bound_volume_and_claim_bind_without_the_controller_marks(
    api_server: ApiServer,
) -> None:
    recorder = FakeRecorder()
    async with running(api_server, *binder_stack(recorder)) as env:
        volumes, claims = apis(env)
        await volumes.create(volume("chosen", "1Gi"))
        await claims.create(claim("named", volume_name="chosen"))
        await wait_phase(claims, "named", "Bound")
        named = await claims.get("named")
        assert named.metadata.annotations == {"pv.kubernetes.io/bind-completed": "yes"}
        chosen = await volumes.get("chosen")
        assert chosen.metadata.annotations == {"pv.kubernetes.io/bound-by-controller": "yes"}
        await claims.create(claim("thief", volume_name="chosen"))
        await eventually(
            lambda: (
                'Warning FailedBinding volume "chosen" already bound to a different claim.'
                in recorder.events
            )
        )
        assert await phase_of(claims, "thief") == "Pending"


async def test_a_claim_without_class_or_volume_waits_with_failed_binding(
    api_server: ApiServer,
) -> None:
    recorder = FakeRecorder()
    async with running(api_server, *binder_stack(recorder)) as env:
        _, claims = apis(env)
        await claims.create(claim("lonely", "1Gi"))
        await eventually(
            lambda: (
                "Normal FailedBinding no persistent volumes available for this claim and no "
                "storage class is set" in recorder.events
            )
        )
        assert await phase_of(claims, "lonely") == "Pending"


async def test_claims_of_a_class_wait_for_its_provisioner_or_their_first_consumer(
    api_server: ApiServer,
) -> None:
    recorder = FakeRecorder()
    async with running(api_server, *binder_stack(recorder)) as env:
        _, claims = apis(env)
        classes: Any = env.client.api(StorageClass)
        await classes.create(
            StorageClass(metadata=ObjectMeta(name="now"), provisioner="example.com/disks")
        )
        await classes.create(
            StorageClass(
                metadata=ObjectMeta(name="later"),
                provisioner="example.com/disks",
                volume_binding_mode="WaitForFirstConsumer",
            )
        )
        await claims.create(claim("eager", storage_class="now"))
        await claims.create(claim("patient", storage_class="later"))
        await eventually(
            lambda: (
                "Normal ExternalProvisioning waiting for a volume to be created, either by "
                'external provisioner "example.com/disks" or manually created by system '
                "administrator" in recorder.events
            )
        )
        await eventually(
            lambda: (
                "Normal WaitForFirstConsumer waiting for first consumer to be created before "
                "binding" in recorder.events
            )
        )
        eager = await claims.get("eager")
        assert eager.metadata.annotations == {
            "volume.beta.kubernetes.io/storage-provisioner": "example.com/disks",
            "volume.kubernetes.io/storage-provisioner": "example.com/disks",
        }
        assert (await claims.get("patient")).metadata.annotations is None


async def test_released_volumes_are_retained_or_fail_to_delete(api_server: ApiServer) -> None:
    recorder = FakeRecorder()
    async with running(api_server, *binder_stack(recorder)) as env:
        volumes, claims = apis(env)
        await volumes.create(volume("kept", "1Gi"))
        await volumes.create(volume("doomed", "1Gi", policy="Delete"))
        await volumes.create(volume("scratch", "1Gi", policy="Delete", path="/tmp"))
        await claims.create(claim("a", volume_name="kept"))
        await claims.create(claim("b", volume_name="doomed"))
        await claims.create(claim("c", volume_name="scratch"))
        for name in ("a", "b", "c"):
            await wait_phase(claims, name, "Bound")
            await claims.delete(name)
        await wait_phase(volumes, "kept", "Released")
        await wait_phase(volumes, "doomed", "Failed")
        doomed = await volumes.get("doomed")
        message = "host_path deleter only supports /tmp/.+ but received provided /data/doomed"
        assert doomed.status.message == message
        assert f"Warning VolumeFailedDelete {message}" in recorder.events

        async def scratch_gone() -> bool:
            return await phase_of(volumes, "scratch") is None

        await eventually(scratch_gone)


async def test_the_resync_tells_which_pods_a_waiting_claim_waits_for(
    api_server: ApiServer,
) -> None:
    recorder = FakeRecorder()
    clock = FakeClock()
    async with running(api_server, binder_on(recorder, clock)) as env:
        await env.client.api(StorageClass).create(
            StorageClass(
                metadata=ObjectMeta(name="later"),
                provisioner="example.com/disks",
                volume_binding_mode="WaitForFirstConsumer",
            )
        )
        _, claims = apis(env)
        await claims.create(claim("patient", storage_class="later"))
        waiting = (
            "Normal WaitForFirstConsumer waiting for first consumer to be created before binding"
        )
        await eventually(lambda: waiting in recorder.events)
        source = PersistentVolumeClaimVolumeSource(claim_name="patient")
        await env.client.api(Pod, NS).create(
            Pod(
                metadata=ObjectMeta(name="user"),
                spec=PodSpec(
                    containers=[Container(name="c", image="busybox")],
                    volumes=[Volume(name="data", persistent_volume_claim=source)],
                ),
            )
        )
        await env.quiesce()
        assert not any("WaitForPodScheduled" in e for e in recorder.events)  # pods are not watched
        await clock.advance(15)  # --pvclaimbinder-sync-period
        await eventually(
            lambda: (
                "Normal WaitForPodScheduled waiting for pod user to be scheduled" in recorder.events
            )
        )


async def test_a_claim_whose_volume_goes_is_lost_until_it_comes_back(
    api_server: ApiServer,
) -> None:
    recorder = FakeRecorder()
    clock = FakeClock()
    async with running(api_server, binder_on(recorder, clock)) as env:
        volumes, claims = apis(env)
        await volumes.create(volume("disk", "1Gi"))
        made = await claims.create(claim("data", volume_name="disk"))
        await wait_phase(claims, "data", "Bound")
        await volumes.patch("disk", {"metadata": {"finalizers": None}})
        await volumes.delete("disk")
        await wait_phase(claims, "data", "Lost")
        assert (
            "Warning ClaimLost Bound claim has lost its PersistentVolume. Data on the volume is "
            "lost!" in recorder.events
        )
        back = volume("disk", "1Gi")
        ref = ObjectReference(
            kind="PersistentVolumeClaim", namespace=NS, name="data", uid=made.metadata.uid
        )
        await volumes.create(
            msgspec.structs.replace(back, spec=msgspec.structs.replace(back.spec, claim_ref=ref))
        )
        await wait_phase(claims, "data", "Bound")  # at once, not at the next resync
        await wait_phase(volumes, "disk", "Bound")

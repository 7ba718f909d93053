"""The attach/detach controller against the embedded API server: VolumeAttachments for CSI
volumes of pods on managed nodes, removed when the pods go; node.status.volumesAttached."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllerkit import CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION, volume_attachment_name
from kcm.controllers.attachdetach import AttachDetachController
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import (
    Container,
    CSIPersistentVolumeSource,
    Node,
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
from kcm.models.storage_v1 import CSIDriver, CSIDriverSpec, VolumeAttachment
from kcm.testing import FakeRecorder, eventually
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio

NS = "default"
DRIVER = "csi.example.com"


async def bound_csi_volume(
    client: ApiClient, name: str, driver: str = DRIVER, storage_class: str | None = None
) -> None:
    """A claim ``name`` bound to a CSI PV ``pv-<name>`` (handle ``h-<name>``)."""
    claims: Any = client.api(PersistentVolumeClaim, NS)
    claim = await claims.create(
        PersistentVolumeClaim(
            metadata=ObjectMeta(name=name),
            spec=PersistentVolumeClaimSpec(
                access_modes=["ReadWriteOnce"],
                resources=VolumeResourceRequirements(requests={"storage": "1Gi"}),
                volume_name=f"pv-{name}",
                storage_class_name=storage_class,
            ),
        )
    )
    await claims.patch_status(name, {"status": {"phase": "Bound"}})
    await client.api(PersistentVolume).create(
        PersistentVolume(
            metadata=ObjectMeta(name=f"pv-{name}"),
            spec=PersistentVolumeSpec(
                capacity={"storage": "1Gi"},
                access_modes=["ReadWriteOnce"],
                csi=CSIPersistentVolumeSource(driver=driver, volume_handle=f"h-{name}"),
                storage_class_name=storage_class,
                claim_ref=ObjectReference(
                    kind="PersistentVolumeClaim",
                    namespace=NS,
                    name=name,
                    uid=claim.metadata.uid,
                ),
            ),
        )
    )


async def node(client: ApiClient, name: str, *, managed: bool = True) -> None:
    annotations = {CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION: "true"} if managed else None
    await client.api(Node).create(Node(metadata=ObjectMeta(name=name, annotations=annotations)))


def pod(name: str, claim: str, node_name: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name),
        spec=PodSpec(
            node_name=node_name,
            containers=[Container(name="c", image="busybox")],
            volumes=[
                Volume(
                    name="data",
                    persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim),
                )
            ],
        ),
    )


async def names(api: Any) -> set[str]:
    return {o.metadata.name for o in (await api.list()).items}


async def test_a_csi_volume_is_attached_while_a_pod_uses_it(api_server: ApiServer) -> None:
    recorder = FakeRecorder()

    def build(client: ApiClient, factory: SharedInformerFactory) -> AttachDetachController:
        return AttachDetachController(client, factory, recorder=recorder)

    async with running(api_server, build) as env:
        client = env.client
        attachments: Any = client.api(VolumeAttachment)
        await node(client, "n1")
        await bound_csi_volume(client, "data")
        await client.api(Pod, NS).create(pod("user", "data", "n1"))
        name = volume_attachment_name("h-data", DRIVER, "n1")

        async def created() -> bool:
            return name in await names(attachments)

        await eventually(created)
        made = await attachments.get(name)
        assert (made.spec.attacher, made.spec.node_name) == (DRIVER, "n1")
        assert made.spec.source.persistent_volume_name == "pv-data"
        assert made.status is None or not made.status.attached

        await attachments.patch_status(name, {"status": {"attached": True}})

        async def reported() -> bool:
            status = (await client.api(Node).get("n1")).status
            attached = (status.volumes_attached if status else None) or ()
            return [(v.name, v.device_path or "") for v in attached] == [
                (f"kubernetes.io/csi/{DRIVER}^h-data", "")
            ]

        await eventually(reported)
        message = (
            'Normal SuccessfulAttachVolume AttachVolume.Attach succeeded for volume "pv-data" '
        )
        await eventually(lambda: message in recorder.events)

        await client.api(Pod, NS).delete("user", grace_period_seconds=0)

        async def detached() -> bool:
            return name not in await names(attachments)

        await eventually(detached)

        async def unreported() -> bool:
            return not (await client.api(Node).get("n1")).status.volumes_attached

        await eventually(unreported)


async def test_no_attachment_without_attach_or_management(api_server: ApiServer) -> None:
    def build(client: ApiClient, factory: SharedInformerFactory) -> AttachDetachController:
        return AttachDetachController(client, factory)

    async with running(api_server, build) as env:
        client = env.client
        attachments: Any = client.api(VolumeAttachment)
        await client.api(CSIDriver).create(
            CSIDriver(
                metadata=ObjectMeta(name="noattach.example.com"),
                spec=CSIDriverSpec(attach_required=False),
            )
        )
        await node(client, "n1")
        await node(client, "unmanaged", managed=False)
        await bound_csi_volume(client, "skip", driver="noattach.example.com")
        await bound_csi_volume(client, "elsewhere")
        await client.api(PersistentVolumeClaim, NS).create(
            PersistentVolumeClaim(
                metadata=ObjectMeta(name="unbound"),
                spec=PersistentVolumeClaimSpec(
                    access_modes=["ReadWriteOnce"],
                    resources=VolumeResourceRequirements(requests={"storage": "1Gi"}),
                ),
            )
        )
        await client.api(Pod, NS).create(pod("a", "skip", "n1"))
        await client.api(Pod, NS).create(pod("b", "elsewhere", "unmanaged"))
        await client.api(Pod, NS).create(pod("c", "unbound", "n1"))
        await env.quiesce()
        assert await names(attachments) == set()

        # the node becomes managed (a kubelet with --enable-controller-attach-detach)
        await client.api(Node).patch(
            "unmanaged",
            {"metadata": {"annotations": {CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION: "true"}}},
        )
        expected = volume_attachment_name("h-elsewhere", DRIVER, "unmanaged")

        async def created() -> bool:
            return await names(attachments) == {expected}

        await eventually(created)


def test_a_sync_period_under_a_second_is_refused() -> None:
    from kcm.controllers.attachdetach import InvalidSyncPeriod

    with pytest.raises(InvalidSyncPeriod, match="greater than one second"):
        AttachDetachController(None, None, reconcile_sync_period=0.5)  # type: ignore[arg-type]


async def test_a_single_node_volume_waits_for_the_other_node(api_server: ApiServer) -> None:
    recorder = FakeRecorder()

    def build(client: ApiClient, factory: SharedInformerFactory) -> AttachDetachController:
        return AttachDetachController(client, factory, recorder=recorder)

    async with running(api_server, build) as env:
        client = env.client
        attachments: Any = client.api(VolumeAttachment)
        await node(client, "n1")
        await node(client, "n2")
        await bound_csi_volume(client, "data")  # ReadWriteOnce
        await client.api(Pod, NS).create(pod("first", "data", "n1"))
        on_n1 = volume_attachment_name("h-data", DRIVER, "n1")

        async def created(*expected: str) -> bool:
            return await names(attachments) == set(expected)

        await eventually(lambda: created(on_n1))
        await client.api(Pod, NS).create(pod("second", "data", "n2"))
        await env.quiesce()  # n1's first attach is in flight: n2 waits without a word
        assert await names(attachments) == {on_n1}
        assert not [e for e in recorder.events if "Multi-Attach" in e]
        await attachments.patch_status(on_n1, {"status": {"attached": True}})
        message = (
            'Warning FailedAttachVolume Multi-Attach error for volume "pv-data" Volume is '
            "already used by pod(s) first"
        )
        await eventually(lambda: message in recorder.events)
        await env.quiesce()
        assert await names(attachments) == {on_n1}
        assert recorder.events.count(message) == 1  # told once

        await client.api(Pod, NS).delete("first", grace_period_seconds=0)
        await eventually(lambda: created(volume_attachment_name("h-data", DRIVER, "n2")))


async def test_a_deleted_node_loses_its_attachments(api_server: ApiServer) -> None:
    def build(client: ApiClient, factory: SharedInformerFactory) -> AttachDetachController:
        return AttachDetachController(client, factory)

    async with running(api_server, build) as env:
        client = env.client
        attachments: Any = client.api(VolumeAttachment)
        await node(client, "n1")
        await bound_csi_volume(client, "data")
        await client.api(Pod, NS).create(pod("user", "data", "n1"))
        name = volume_attachment_name("h-data", DRIVER, "n1")

        async def present() -> bool:
            return name in await names(attachments)

        await eventually(present)
        await attachments.patch_status(name, {"status": {"attached": True}})
        await client.api(Node).delete("n1")

        async def detached() -> bool:
            return not await present()

        await eventually(detached)

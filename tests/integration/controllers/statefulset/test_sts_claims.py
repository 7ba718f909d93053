"""StatefulSet claims against the embedded API server: created before their pod, labelled,
kept on scale down, and a pod is not created while its claim cannot be."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.models.core_v1 import PersistentVolumeClaim
from tests.integration.controllers.statefulset.sts_harness import make_set, names, running

pytestmark = pytest.mark.anyio

FORBIDDEN = (
    403,
    {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": "Forbidden",
        "message": 'persistentvolumeclaims "data-web-0" is forbidden: exceeded quota: storage',
        "code": 403,
    },
)


async def test_sts_creates_each_claim_before_its_pod(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2, claims=("data", "logs")))
        await c.roll_out()
        creates = [p.rsplit("/", 1)[-1] for m, p in c.tap.writes if m == "POST"]
        assert creates == [
            "controllerrevisions",
            "persistentvolumeclaims",
            "persistentvolumeclaims",
            "pods",
            "persistentvolumeclaims",
            "persistentvolumeclaims",
            "pods",
        ]
        claims = {str(p.metadata.name): p for p in await c.claims()}
        assert sorted(claims) == ["data-web-0", "data-web-1", "logs-web-0", "logs-web-1"]
        assert claims["data-web-1"].metadata.labels == {"app": "web"}  # the selector's labels
        assert not claims["data-web-1"].metadata.owner_references  # retained: no owner
        assert c.events("SuccessfulCreate")[:3] == [
            "Normal SuccessfulCreate create Claim data-web-0 Pod web-0 in StatefulSet web success",
            "Normal SuccessfulCreate create Claim logs-web-0 Pod web-0 in StatefulSet web success",
            "Normal SuccessfulCreate create Pod web-0 in StatefulSet web successful",
        ]


async def test_sts_pods_come_up_while_their_claims_stay_pending(api_server: ApiServer) -> None:
    """No provisioner binds the claims; as Kubernetes 1.24 does, the pods are created anyway."""
    async with running(api_server) as c:
        await c.create(make_set(replicas=3, claims=("data",)))
        await c.roll_out()
        assert await c.pod_names() == ["web-0", "web-1", "web-2"]
        assert all(not (p.status and p.status.phase == "Bound") for p in await c.claims())


async def test_sts_keeps_claims_when_scaling_down_and_reuses_them(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        await c.create(make_set(replicas=2, claims=("data",)))
        await c.roll_out()
        uids = {p.metadata.name: p.metadata.uid for p in await c.claims()}
        await c.patch_set("web", {"spec": {"replicas": 1}})
        assert await c.pod_names() == ["web-0"]
        assert names(await c.claims()) == ["data-web-0", "data-web-1"]
        await c.patch_set("web", {"spec": {"replicas": 2}})
        await c.roll_out()
        assert {p.metadata.name: p.metadata.uid for p in await c.claims()} == uids
        claim_posts = [p for m, p in c.tap.writes if m == "POST" and "claims" in p]
        assert len(claim_posts) == 2  # the existing claim of web-1 was reused


async def test_sts_does_not_create_a_pod_whose_claim_failed(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        c.tap.fail[("POST", "/persistentvolumeclaims")] = FORBIDDEN
        await c.create(make_set(replicas=1, claims=("data",)))
        message = 'persistentvolumeclaims "data-web-0" is forbidden: exceeded quota: storage'
        assert c.events()[:2] == [
            "Warning FailedCreate create Claim data-web-0 for Pod web-0 in StatefulSet web "
            f"failed error: {message}",
            "Warning FailedCreate create Pod web-0 in StatefulSet web failed error: "
            f"failed to create PVC data-web-0: {message}",
        ]
        # the sync is retried with backoff; then the claim and the pod are created
        await c.advance(1)
        assert await c.pod_names() == ["web-0"]
        assert names(await c.claims()) == ["data-web-0"]


async def test_sts_waits_for_a_claim_that_is_being_deleted(api_server: ApiServer) -> None:
    async with running(api_server) as c:
        api = c.client.api(PersistentVolumeClaim, "default")
        held = make_set(replicas=1, claims=("data",))
        await c.create(held)
        await c.roll_out()
        await api.patch(
            "data-web-0", {"metadata": {"finalizers": ["kubernetes.io/pvc-protection"]}}
        )
        await api.delete("data-web-0")
        await c.delete_pod("web-0")
        assert await c.pod_names() == []
        assert c.events("FailedCreate") == [
            "Warning FailedCreate create Pod web-0 in StatefulSet web failed error: "
            "pvc data-web-0 is being deleted"
        ]
        await api.patch("data-web-0", {"metadata": {"finalizers": None}})
        await c.settle()
        await c.advance(1)
        assert await c.pod_names() == ["web-0"]
        assert names(await c.claims()) == ["data-web-0"]

"""The disruption controller against the embedded API server: expected pods from each kind
of controller, integer and percentage budgets, a selector that matches nothing, pods without
a controller, the fail-safe, conditions and observedGeneration."""

from __future__ import annotations

import pytest

from kcm.models.apps_v1 import (
    Deployment,
    DeploymentSpec,
    ReplicaSet,
    ReplicaSetSpec,
    StatefulSet,
    StatefulSetSpec,
)
from kcm.models.core_v1 import (
    Container,
    PodSpec,
    PodTemplateSpec,
    ReplicationController,
    ReplicationControllerSpec,
)
from kcm.models.meta_v1 import LabelSelector, ObjectMeta, OwnerReference
from kcm.models.policy_v1 import PodDisruptionBudget
from tests.integration.controllers.disruption.pdb_harness import NS, Env, budget, running

pytestmark = pytest.mark.anyio

_TEMPLATE = PodTemplateSpec(
    metadata=ObjectMeta(labels={"app": "web"}),
    spec=PodSpec(containers=[Container(name="app", image="nginx")]),
)
_SELECTOR = LabelSelector(match_labels={"app": "web"})


def _rs(name: str, replicas: int, owner: OwnerReference | None = None) -> ReplicaSet:
    return ReplicaSet(
        metadata=ObjectMeta(name=name, namespace=NS, owner_references=[owner] if owner else None),
        spec=ReplicaSetSpec(replicas=replicas, selector=_SELECTOR, template=_TEMPLATE),
    )


async def test_pdb_min_available_integer_counts_pods() -> None:
    async with running() as env:
        rs = await env.create(_rs("web", 5))
        await env.owned_pods(rs, 3)
        await env.create(budget(min_available=2))
        assert await env.numbers() == (3, 2, 3, 1)
        status = await env.status()
        assert status["observedGeneration"] == 1
        (condition,) = status["conditions"]
        assert condition["type"] == "DisruptionAllowed"
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "True",
            "SufficientPods",
            "",
        )
        assert condition["observedGeneration"] == 1


async def test_pdb_percentage_min_available_uses_controller_scale_rounded_up() -> None:
    async with running() as env:
        rs = await env.create(_rs("web", 5))
        await env.owned_pods(rs, 5)
        await env.create(budget(min_available="50%"))
        assert await env.numbers() == (5, 3, 5, 2)  # 50 % of 5 rounds up to 3


async def test_pdb_max_unavailable_integer_and_percentage() -> None:
    async with running() as env:
        rs = await env.create(_rs("web", 4))
        await env.owned_pods(rs, 4)
        await env.create(budget("int", max_unavailable=1))
        await env.create(budget("pct", max_unavailable="30%"))
        assert await env.numbers("int") == (4, 3, 4, 1)
        assert await env.numbers("pct") == (4, 2, 4, 2)  # 30 % of 4 = 1.2 -> 2 unavailable


async def test_pdb_expected_pods_from_deployment_through_its_replica_set() -> None:
    async with running() as env:
        deployment = await env.create(
            Deployment(
                metadata=ObjectMeta(name="web", namespace=NS),
                spec=DeploymentSpec(replicas=6, selector=_SELECTOR, template=_TEMPLATE),
            )
        )
        ref = OwnerReference(
            api_version="apps/v1",
            kind="Deployment",
            name="web",
            uid=deployment.metadata.uid,
            controller=True,
        )
        rs = await env.create(_rs("web-abc", 2, ref))
        await env.owned_pods(rs, 2)
        await env.create(budget(max_unavailable=1))
        assert await env.numbers() == (6, 5, 2, 0)


async def test_pdb_expected_pods_from_replication_controller_and_stateful_set() -> None:
    async with running() as env:
        rc = await env.create(
            ReplicationController(
                metadata=ObjectMeta(name="rc", namespace=NS),
                spec=ReplicationControllerSpec(
                    replicas=2, selector={"app": "web"}, template=_TEMPLATE
                ),
            )
        )
        sts = await env.create(
            StatefulSet(
                metadata=ObjectMeta(name="sts", namespace=NS),
                spec=StatefulSetSpec(
                    replicas=3, selector=_SELECTOR, template=_TEMPLATE, service_name="sts"
                ),
            )
        )
        await env.owned_pods(rc, 2)
        await env.owned_pods(sts, 3)
        await env.create(budget(max_unavailable="50%"))
        # 2 + 3 expected; 50 % of 5 rounds up to 3 unavailable.
        assert await env.numbers() == (5, 2, 5, 3)


async def test_pdb_scale_follows_the_controller() -> None:
    async with running() as env:
        rs = await env.create(_rs("web", 2))
        await env.owned_pods(rs, 2)
        await env.create(budget(min_available="100%"))
        assert await env.numbers() == (2, 2, 2, 0)
        await env.client.api(ReplicaSet, NS).patch("web", {"spec": {"replicas": 4}})
        await env.owned_pods(rs, 4, prefix="more")
        await env.settle()
        assert await env.numbers() == (4, 4, 6, 2)


async def test_pdb_selector_matching_nothing_allows_no_disruption() -> None:
    async with running() as env:
        await env.create(budget(max_unavailable=1, labels={"app": "none"}))
        assert await env.numbers() == (0, 0, 0, 0)
        status = await env.status()
        assert status["conditions"][0]["reason"] == "InsufficientPods"
        assert "Normal NoPods No matching pods found" in env.events()


async def test_pdb_empty_selector_selects_every_pod_of_the_namespace() -> None:
    async with running() as env:
        await env.pod("a", labels={"x": "1"})
        await env.pod("b", labels={"y": "2"})
        await env.create(budget(min_available=1, selector=LabelSelector()))
        assert await env.numbers() == (2, 1, 2, 1)


async def test_pdb_unmanaged_pods_are_counted_only_by_an_integer_min_available() -> None:
    async with running() as env:
        await env.pod("a")
        await env.pod("b")
        await env.create(budget("int", min_available=1))
        await env.create(budget("pct", min_available="50%"))
        await env.create(budget("max", max_unavailable=1))
        assert await env.numbers("int") == (2, 1, 2, 1)
        # 1.24 leaves unmanaged pods out of the expected count (it only logs them).
        assert await env.numbers("pct") == (0, 0, 2, 0)
        assert await env.numbers("max") == (0, 0, 2, 0)
        assert not env.events("CalculateExpectedPodCountFailed")


async def test_pdb_pod_whose_controller_is_gone_fails_safe() -> None:
    async with running() as env:
        rs = await env.create(_rs("web", 2))
        await env.owned_pods(rs, 2)
        await env.create(budget(max_unavailable=1))
        assert await env.numbers() == (2, 1, 2, 1)
        await env.client.api(ReplicaSet, NS).delete("web")  # no garbage collector here
        await env.set_ready("web-0", False)  # a pod event: the budget syncs again
        status = await env.status()
        assert status["disruptionsAllowed"] == 0
        (condition,) = status["conditions"]
        assert (condition["status"], condition["reason"]) == ("False", "SyncFailed")
        # The first pod listed without a controller is named (Go's listing order is arbitrary).
        assert condition["message"] in (f'found no controllers for pod "web-{i}"' for i in (0, 1))
        assert status["expectedPods"] == 2  # the rest of the status is left as it was
        (event,) = set(env.events("CalculateExpectedPodCountFailed"))
        assert event == (
            "Warning CalculateExpectedPodCountFailed Failed to calculate the number of expected "
            f"pods: {condition['message']}"
        )


async def test_pdb_unknown_controller_kind_fails_safe_with_go_message() -> None:
    async with running() as env:
        ref = OwnerReference(
            api_version="example.com/v1", kind="Thing", name="t", uid="u-1", controller=True
        )
        await env.pod("a", owner=ref)
        await env.create(budget(max_unavailable=1))
        status = await env.status()
        assert status["conditions"][0]["reason"] == "SyncFailed"
        assert status["conditions"][0]["message"] == (
            'no matches for kind "Thing" in version "example.com/v1"'
        )


async def test_pdb_unready_and_deleting_pods_are_not_healthy() -> None:
    async with running() as env:
        rs = await env.create(_rs("web", 3))
        await env.owned_pods(rs, 3)
        await env.create(budget(min_available=1))
        assert await env.numbers() == (3, 1, 3, 2)
        await env.set_ready("web-0", False)
        assert await env.numbers() == (3, 1, 2, 1)
        await env.client.http.delete(f"/api/v1/namespaces/{NS}/pods/web-1")  # graceful: stays
        await env.settle()
        assert await env.numbers() == (3, 1, 1, 0)


async def test_pdb_observed_generation_follows_spec_changes() -> None:
    async with running() as env:
        rs = await env.create(_rs("web", 3))
        await env.owned_pods(rs, 3)
        await env.create(budget(min_available=1))
        await env.client.api(PodDisruptionBudget, NS).patch("pdb", {"spec": {"minAvailable": 3}})
        await env.settle()
        status = await env.status()
        assert status["observedGeneration"] == 2
        assert status["conditions"][0]["observedGeneration"] == 2
        assert await env.numbers() == (3, 3, 3, 0)
        assert status["conditions"][0]["reason"] == "InsufficientPods"


async def test_pdb_pod_selected_by_two_budgets_is_warned_about() -> None:
    async with running() as env:
        await env.create(budget("a", min_available=1))
        await env.create(budget("b", min_available=1))
        await env.pod("p")
        assert (
            'Warning MultiplePodDisruptionBudgets Pod "default"/"p" matches multiple '
            'PodDisruptionBudgets.  Chose "a" arbitrarily.'
        ) in env.events()


def _crd(kind: str, plural: str, *, scale: bool) -> dict[str, object]:
    version: dict[str, object] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        },
    }
    if scale:
        version["subresources"] = {
            "status": {},
            "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"},
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [version],
        },
    }


async def _custom_owner(env: Env, kind: str, plural: str, *, scale: bool) -> OwnerReference:
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert (await env.client.http.post(crds, json=_crd(kind, plural, scale=scale))).is_success
    created = await env.client.http.post(
        f"/apis/example.com/v1/namespaces/{NS}/{plural}",
        json={
            "apiVersion": "example.com/v1",
            "kind": kind,
            "metadata": {"name": "w"},
            "spec": {"size": 4},
        },
    )
    assert created.is_success, created.text
    uid = created.json()["metadata"]["uid"]
    return OwnerReference(
        api_version="example.com/v1", kind=kind, name="w", uid=uid, controller=True
    )


async def test_pdb_expected_pods_from_custom_resource_scale() -> None:
    async with running() as env:
        ref = await _custom_owner(env, "Widget", "widgets", scale=True)
        await env.pod("w-0", owner=ref)
        await env.pod("w-1", owner=ref)
        await env.create(budget(max_unavailable="50%"))
        assert await env.numbers() == (4, 2, 2, 0)  # the Widget's /scale says 4


async def test_pdb_custom_resource_without_scale_fails_safe() -> None:
    async with running() as env:
        ref = await _custom_owner(env, "Gadget", "gadgets", scale=False)
        await env.pod("g-0", owner=ref)
        await env.create(budget(max_unavailable=1))
        status = await env.status()
        assert status["conditions"][0]["reason"] == "SyncFailed"
        assert status["conditions"][0]["message"] == (
            "gadgets.example.com does not implement the scale subresource"
        )

"""The eviction API of the embedded server with the disruption controller: budgets respected
(429 with Go's causes), disruptedPods recorded and expired on the fake clock, pods that may go
without a budget check, dry runs, two budgets, a status behind its spec."""

from __future__ import annotations

import pytest

from kcm.models.apps_v1 import ReplicaSet, ReplicaSetSpec
from kcm.models.core_v1 import Container, Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.models.policy_v1 import PodDisruptionBudget
from tests.integration.controllers.disruption.pdb_harness import NS, Env, budget, running

pytestmark = pytest.mark.anyio

_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


async def _three_pods_min_two(env: Env) -> None:
    rs = await env.create(
        ReplicaSet(
            metadata=ObjectMeta(name="web", namespace=NS),
            spec=ReplicaSetSpec(
                replicas=3,
                selector=LabelSelector(match_labels={"app": "web"}),
                template=PodTemplateSpec(
                    metadata=ObjectMeta(labels={"app": "web"}),
                    spec=PodSpec(containers=[Container(name="app", image="nginx")]),
                ),
            ),
        )
    )
    await env.owned_pods(rs, 3)
    await env.create(budget(min_available=2))
    assert await env.numbers() == (3, 2, 3, 1)


async def _exists(env: Env, name: str) -> bool:
    return (await env.client.http.get(f"/api/v1/namespaces/{NS}/pods/{name}")).status_code == 200


async def test_eviction_takes_a_disruption_then_refuses_with_429() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        response = await env.evict("web-0", deleteOptions={"gracePeriodSeconds": 30})
        assert response.status_code == 201
        assert response.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }
        pod = await env.client.api(Pod, NS).get("web-0")
        assert pod.metadata.deletion_timestamp is not None  # graceful: the kubelet's turn
        assert await env.numbers() == (3, 2, 2, 0)
        refused = await env.evict("web-1")
        assert refused.status_code == 429
        assert "retry-after" not in refused.headers
        assert refused.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": _VIOLATION,
            "reason": "TooManyRequests",
            "details": {
                "causes": [
                    {
                        "reason": "DisruptionBudget",
                        "message": "The disruption budget pdb needs 2 healthy pods and has 2 "
                        "currently",
                    }
                ]
            },
            "code": 429,
        }
        assert await _exists(env, "web-1")


async def test_eviction_records_disrupted_pod_until_it_expires() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        # Keep the pod: the budget is taken before the delete, which a wrong uid
        # precondition then refuses (a pod the kubelet never deletes).
        response = await env.evict(
            "web-0", deleteOptions={"preconditions": {"uid": "not-the-pods"}}
        )
        assert response.status_code == 409  # the delete failed, the budget was taken
        status = await env.status()
        assert list(status["disruptedPods"]) == ["web-0"]
        assert status["disruptionsAllowed"] == 0
        assert status["currentHealthy"] == 2  # web-0 counts as gone for two minutes
        await env.advance(119)
        assert (await env.status())["disruptedPods"] == {"web-0": status["disruptedPods"]["web-0"]}
        await env.advance(2)
        after = await env.status()
        assert "disruptedPods" not in after
        assert after["currentHealthy"] == 3
        assert after["disruptionsAllowed"] == 1
        assert (
            "Warning NotDeleted Pod was expected by PDB default/default to be deleted but it wasn't"
        ) in env.events()


async def test_eviction_of_pending_finished_or_deleting_pod_skips_budget() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        await env.client.api(PodDisruptionBudget, NS).patch("pdb", {"spec": {"minAvailable": 3}})
        await env.settle()
        assert (await env.status())["disruptionsAllowed"] == 0
        await env.client.api(Pod, NS).patch_status("web-0", {"status": {"phase": "Succeeded"}})
        await env.settle()
        assert (await env.evict("web-0")).status_code == 201
        assert not await _exists(env, "web-0")
        await env.pod("pending", node=None)
        await env.client.api(Pod, NS).patch_status("pending", {"status": {"phase": "Pending"}})
        assert (await env.evict("pending")).status_code == 201
        assert not await _exists(env, "pending")


async def test_eviction_dry_run_changes_nothing() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        before = await env.status()
        response = await env.evict("web-0", query="?dryRun=All")
        assert response.status_code == 201
        assert await _exists(env, "web-0")
        assert await env.status() == before
        mismatch = await env.evict(
            "web-0", query="?dryRun=All", deleteOptions={"dryRun": ["Other"]}
        )
        assert mismatch.status_code == 500


async def test_eviction_with_two_budgets_is_500() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        await env.create(budget("second", max_unavailable=1))
        response = await env.evict("web-0")
        assert response.status_code == 500
        assert response.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "This pod has more than one PodDisruptionBudget, which the eviction "
            "subresource does not support.",
            "code": 500,
        }


async def test_eviction_while_budget_status_is_behind_its_spec_is_429_with_retry_after() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        # The controller is stopped, so the status stays at generation 1.
        env.controller.controller.queue.shut_down()
        await env.client.api(PodDisruptionBudget, NS).patch("pdb", {"spec": {"minAvailable": 1}})
        response = await env.client.http.post(
            f"/api/v1/namespaces/{NS}/pods/web-0/eviction",
            json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0"}},
        )
        assert response.status_code == 429
        assert response.headers["retry-after"] == "10"
        assert response.json()["details"] == {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget pdb is still being processed by the server.",
                }
            ],
            "retryAfterSeconds": 10,
        }


async def test_eviction_of_unready_pod_while_budget_is_met_leaves_budget_alone() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        await env.pod("extra")
        assert await env.numbers() == (4, 2, 4, 2)
        await env.set_ready("extra", False)
        assert await env.numbers() == (4, 2, 3, 1)
        assert (await env.evict("extra")).status_code == 201
        assert "disruptedPods" not in await env.status()


async def test_eviction_mismatched_name_and_missing_pod() -> None:
    async with running() as env:
        await _three_pods_min_two(env)
        response = await env.client.http.post(
            f"/api/v1/namespaces/{NS}/pods/web-0/eviction",
            json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "x"}},
        )
        assert response.status_code == 400
        assert response.json()["message"] == "name in URL does not match name in Eviction object"
        assert (await env.evict("nope")).status_code == 404

"""kcm.quota: usage per kind, a namespace's usage, and the admission check (kube's texts)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kcm.models import from_dict, to_dict
from kcm.models.core_v1 import Pod
from kcm.quota import (
    PersistentVolumeClaimEvaluator,
    PodEvaluator,
    Quantity,
    QuotaExceeded,
    ServiceEvaluator,
    calculate_usage,
    charge,
    counts_against_quota,
    evaluator_for,
    next_status,
    to_json,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def pod(name: str = "p", requests: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    resources = {"requests": requests} if requests else {}
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "resources": resources}], **spec},
    }


def quota(hard: dict[str, str], used: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"hard": hard}
    if used is not None:
        status["used"] = used
    return {
        "metadata": {"name": "q", "namespace": "ns"},
        "spec": {"hard": hard, **spec},
        "status": status,
    }


@pytest.mark.parametrize(
    ("texts", "total"),
    [
        (["100m", "200m"], "300m"),
        (["1Gi", "512Mi"], "1536Mi"),
        (["0", "128Mi"], "128Mi"),  # a zero takes the other side's format
        (["1", "500m"], "1500m"),
        (["1e3", "1"], "1001"),
        (["2", "3"], "5"),
    ],
)
def test_sums_print_as_go_prints_them(texts: list[str], total: str) -> None:
    a, b = (Quantity.parse(t) for t in texts)
    assert str(a + b) == total


def test_pod_usage_sums_containers_takes_init_maximum_and_counts() -> None:
    p = pod(requests={"cpu": "100m", "memory": "64Mi"})
    p["spec"]["containers"].append(
        {"name": "d", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "1"}}}
    )
    p["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": "500m"}}}]
    used = to_json(PodEvaluator().usage(p, NOW))
    assert used == {
        "count/pods": "1",
        "cpu": "500m",
        "limits.cpu": "1",
        "memory": "64Mi",
        "pods": "1",
        "requests.cpu": "500m",
        "requests.memory": "64Mi",
    }


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_finished_pod_only_counts_as_an_object(phase: str) -> None:
    p = pod(requests={"cpu": "1"})
    p["status"] = {"phase": phase}
    assert to_json(PodEvaluator().usage(p, NOW)) == {"count/pods": "1"}


def test_a_pod_past_its_deletion_grace_stops_counting() -> None:
    p = pod()
    p["metadata"] |= {"deletionTimestamp": "2025-12-31T23:59:00Z", "deletionGracePeriodSeconds": 30}
    assert "pods" not in PodEvaluator().usage(p, NOW)
    p["metadata"]["deletionGracePeriodSeconds"] = 120
    assert "pods" in PodEvaluator().usage(p, NOW)


def test_scopes() -> None:
    ev = PodEvaluator()
    best_effort, burstable = pod(), pod(requests={"cpu": "1"})
    terminating = pod(activeDeadlineSeconds=10)
    cross = pod(
        affinity={
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": {"namespaces": ["x"], "topologyKey": "k"}}
                ]
            }
        }
    )
    high = pod(priorityClassName="high")

    def scope(name: str, op: str = "Exists", values: list[str] | None = None) -> dict[str, Any]:
        return {"scopeName": name, "operator": op, "values": values or []}

    assert ev.matches_scope(scope("BestEffort"), best_effort)
    assert not ev.matches_scope(scope("BestEffort"), burstable)
    assert ev.matches_scope(scope("NotBestEffort"), burstable)
    assert ev.matches_scope(scope("Terminating"), terminating)
    assert ev.matches_scope(scope("NotTerminating"), best_effort)
    assert ev.matches_scope(scope("CrossNamespacePodAffinity"), cross)
    assert not ev.matches_scope(scope("CrossNamespacePodAffinity"), best_effort)
    assert ev.matches_scope(scope("PriorityClass", "In", ["high"]), high)
    assert not ev.matches_scope(scope("PriorityClass", "In", ["high"]), best_effort)
    assert ev.matches_scope(scope("PriorityClass", "DoesNotExist"), best_effort)


def test_service_usage_by_type() -> None:
    ports = [{"port": 80}, {"port": 81, "nodePort": 30001}]
    lb = {"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer", "ports": ports}}
    assert to_json(ServiceEvaluator().usage(lb, NOW)) == {
        "count/services": "1",
        "services": "1",
        "services.loadbalancers": "1",
        "services.nodeports": "2",
    }
    lb["spec"]["allocateLoadBalancerNodePorts"] = False
    assert str(ServiceEvaluator().usage(lb, NOW)["services.nodeports"]) == "1"


def test_claim_usage_by_storage_class_rounds_storage_up() -> None:
    claim = {
        "metadata": {"name": "c"},
        "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "1500m"}}},
    }
    assert to_json(PersistentVolumeClaimEvaluator().usage(claim, NOW)) == {
        "count/persistentvolumeclaims": "1",
        "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
        "fast.storageclass.storage.k8s.io/requests.storage": "2",
        "persistentvolumeclaims": "1",
        "requests.storage": "2",
    }


def test_calculate_usage_per_kind_and_scope() -> None:
    objects = {
        ("", "pods"): [pod("a", {"cpu": "100m"}), pod("b", {"cpu": "200m"}), pod("c")],
        ("", "configmaps"): [{"metadata": {"name": "x"}}],
        ("apps", "deployments"): [{"metadata": {"name": "d"}}] * 2,
    }
    hard = {
        "pods": "10",
        "requests.cpu": "1",
        "configmaps": "5",
        "count/deployments.apps": "3",
        "count/widgets.example.com": "1",
    }

    def list_objects(group: str, resource: str) -> list[dict[str, Any]] | None:
        if resource == "widgets":
            return None  # not served
        return objects.get((group, resource), [])

    used = to_json(calculate_usage(quota(hard), list_objects, NOW))
    assert used == {
        "configmaps": "1",
        "count/deployments.apps": "2",
        "pods": "3",
        "requests.cpu": "300m",
    }
    best_effort = quota({"pods": "5"}, scopes=["BestEffort"])
    assert to_json(calculate_usage(best_effort, list_objects, NOW)) == {"pods": "1"}


def test_next_status_keeps_old_usage_only_for_hard_names() -> None:
    q = quota({"pods": "2"}, used={"pods": "1", "secrets": "4"})
    q["spec"]["hard"] = {"pods": "2", "services": "1"}
    status = next_status(q, {"pods": Quantity.count(2)})
    assert status == {"hard": {"pods": "2", "services": "1"}, "used": {"pods": "2"}}
    settled = quota({"pods": "2"}, used={"pods": "2"})
    assert next_status(settled, {"pods": Quantity.count(2)}) is None


def test_charge_adds_usage_and_refuses_with_kube_texts() -> None:
    ev = evaluator_for("", "pods")
    assert ev is not None
    q = quota({"pods": "2", "requests.cpu": "1"}, used={"pods": "1", "requests.cpu": "500m"})
    assert charge([q], ev, "CREATE", pod(requests={"cpu": "500m"}), None, NOW) == {
        "q": {"pods": "2", "requests.cpu": "1"}
    }
    with pytest.raises(QuotaExceeded) as exceeded:
        charge([q], ev, "CREATE", pod(requests={"cpu": "600m"}), None, NOW)
    assert str(exceeded.value) == (
        "exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, "
        "limited: requests.cpu=1"
    )
    with pytest.raises(QuotaExceeded, match=r"^failed quota: q: must specify requests.cpu$"):
        charge([q], ev, "CREATE", pod(), None, NOW)
    unknown = quota({"pods": "2"})
    with pytest.raises(QuotaExceeded, match=r"^status unknown for quota: q, resources: pods$"):
        charge([unknown], ev, "CREATE", pod(), None, NOW)
    assert charge([q], ev, "UPDATE", pod(requests={"cpu": "9"}), None, NOW) == {}


def test_a_service_update_is_charged_only_for_what_it_adds() -> None:
    ev = evaluator_for("", "services")
    assert ev is not None
    q = quota({"services.loadbalancers": "1"}, used={"services.loadbalancers": "1"})
    old = {"metadata": {"name": "s", "resourceVersion": "5"}, "spec": {"type": "ClusterIP"}}
    new = {"metadata": {"name": "s", "resourceVersion": "5"}, "spec": {"type": "LoadBalancer"}}
    with pytest.raises(QuotaExceeded, match=r"requested: services\.loadbalancers=1"):
        charge([q], ev, "UPDATE", new, old, NOW)
    assert charge([q], ev, "UPDATE", new, new, NOW) == {}


def test_ignored_and_unknown_kinds() -> None:
    assert evaluator_for("", "events") is None
    widgets = evaluator_for("example.com", "widgets")
    assert widgets is not None
    assert widgets.matching_resources(["count/widgets.example.com", "pods"]) == [
        "count/widgets.example.com"
    ]


@pytest.mark.parametrize(
    ("phase", "deleted", "grace", "counts"),
    [
        ("Running", None, None, True),
        ("Pending", None, None, True),
        ("Succeeded", None, None, False),
        ("Failed", None, None, False),
        ("Running", "2024-05-01T10:00:00Z", 30, True),  # within its grace period
        ("Running", "2024-05-01T09:00:00Z", 30, False),  # stuck terminating past it
        ("Running", "2024-05-01T09:00:00Z", None, True),  # no grace period: still counted
    ],
)
def test_a_typed_pod_counts_against_quota_as_its_wire_form_does(
    phase: str, deleted: str | None, grace: int | None, counts: bool
) -> None:
    """The quota monitor checks its informer's typed pods without converting them."""
    meta: dict[str, object] = {"name": "p", "namespace": "ns"}
    if deleted is not None:
        meta["deletionTimestamp"] = deleted
    if grace is not None:
        meta["deletionGracePeriodSeconds"] = grace
    wire = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "status": {"phase": phase}}
    pod = from_dict(Pod, wire)
    now = datetime(2024, 5, 1, 10, 0, 10, tzinfo=UTC)
    assert counts_against_quota(pod, now) is counts
    assert counts_against_quota(to_dict(pod), now) is counts

"""PodDisruptionBudgets: the disruption controller's status (expected pods from each kind of
controller, integer and percentage budgets rounded up, healthy pods, a selector that matches
nothing or everything, pods without a controller, spec and scale changes, an expired
disruptedPods entry). No eviction is made here: the eviction API is the server's
(tests/conformance/scenarios/eviction.py)."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Kubelet, Patch, Scenario, Settle
from ._objects import bare_pod, deployment, pod_template, replicaset
from ._steps import made_ready

KINDS = ("poddisruptionbudgets", "replicasets", "pods", "events")


def budget(
    name: str = "pdb",
    *,
    app: str | None = "web",
    selector: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    if selector is None:
        selector = {"matchLabels": {"app": app}}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": selector, **spec},
    }


def stateful_set(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template(name),
        },
    }


def _ready_set(name: str, replicas: int) -> tuple[Create | Settle | Kubelet, ...]:
    return (Create(replicaset(name, replicas)), Settle(), *made_ready(name))


SCENARIOS = [
    Scenario(
        "disruption/min-available-integer",
        (
            *_ready_set("web", 3),
            Create(budget(minAvailable=2)),
            Settle(),
            Kubelet("app=web", ready=False, count=1),
            Settle(),
        ),
        kinds=KINDS,
        doc="minAvailable 2 of 3 Ready pods: 1 disruption (SufficientPods); one pod NotReady: "
        "0 (InsufficientPods)",
    ),
    Scenario(
        "disruption/min-available-percentage",
        (*_ready_set("web", 5), Create(budget(minAvailable="50%")), Settle()),
        kinds=KINDS,
        doc="minAvailable 50% of a ReplicaSet of 5: desiredHealthy 3 (rounded up)",
    ),
    Scenario(
        "disruption/max-unavailable-integer-and-percentage",
        (
            *_ready_set("web", 4),
            Create(budget("int", maxUnavailable=1)),
            Create(budget("pct", app="web", maxUnavailable="30%")),
            Settle(),
        ),
        kinds=KINDS,
        doc="maxUnavailable 1 and 30% of 4: desiredHealthy 3 and 2 (1.2 unavailable rounds up)",
    ),
    Scenario(
        "disruption/deployment-scale",
        (
            Create(deployment("web", 4)),
            Settle(),
            Kubelet("app=web", count=3),
            Settle(),
            Create(budget(maxUnavailable=1)),
            Settle(),
        ),
        kinds=("poddisruptionbudgets", "deployments", "replicasets", "pods", "events"),
        doc="maxUnavailable 1 over a Deployment of 4 (3 Ready): expected 4, desired 3, "
        "current 3, none allowed",
    ),
    Scenario(
        "disruption/stateful-set-percentage",
        (
            Create(stateful_set("web", 4)),
            Settle(),
            *made_ready("web"),
            Create(budget(minAvailable="50%")),
            Settle(),
        ),
        kinds=("poddisruptionbudgets", "statefulsets", "pods", "events"),
        doc="minAvailable 50% of a StatefulSet of 4: desiredHealthy 2",
    ),
    Scenario(
        "disruption/scale-change",
        (
            *_ready_set("web", 2),
            Create(budget(minAvailable="100%")),
            Settle(),
            Patch("replicasets", "web", {"spec": {"replicas": 4}}),
            Settle(),
            *made_ready("web"),
        ),
        kinds=KINDS,
        doc="a budget follows its controller's scale: 2 -> 4 expected",
    ),
    Scenario(
        "disruption/selector-matches-nothing",
        (Create(budget(app="nothing", maxUnavailable=1)), Settle()),
        kinds=KINDS,
        doc="no pods: NoPods, every count 0, InsufficientPods",
    ),
    Scenario(
        "disruption/empty-selector",
        (
            Create(bare_pod("a", "one")),
            Create(bare_pod("b", "two")),
            Kubelet("app in (one,two)"),
            Settle(),
            Create(budget(selector={}, minAvailable=1)),
            Settle(),
        ),
        kinds=KINDS,
        doc="an empty selector selects every pod of the namespace",
    ),
    Scenario(
        "disruption/unmanaged-pods",
        (
            Create(bare_pod("a", "web")),
            Create(bare_pod("b", "web")),
            *made_ready("web"),
            Create(budget("int", minAvailable=1)),
            Create(budget("pct", minAvailable="50%")),
            Create(budget("max", maxUnavailable=1)),
            Settle(),
        ),
        kinds=KINDS,
        doc="pods without a controller count for an integer minAvailable only; 1.24 leaves "
        "them out of the controllers' scale (expected 0) without failing",
    ),
    Scenario(
        "disruption/spec-change",
        (
            *_ready_set("web", 3),
            Create(budget(minAvailable=1)),
            Settle(),
            Patch("poddisruptionbudgets", "pdb", {"spec": {"minAvailable": 3}}),
            Settle(),
        ),
        kinds=KINDS,
        doc="a spec change: observedGeneration 2, desiredHealthy 3, none allowed",
    ),
    Scenario(
        "disruption/disrupted-pod-expired",
        (
            Create(bare_pod("a", "web")),
            Create(bare_pod("b", "web")),
            *made_ready("web"),
            Create(budget(minAvailable=1)),
            Settle(),
            Patch(
                "poddisruptionbudgets",
                "pdb",
                {"status": {"disruptedPods": {"a": "2020-01-01T00:00:00Z"}}},
                subresource="status",
            ),
            Settle(),
        ),
        kinds=KINDS,
        doc="a disruptedPods entry older than two minutes for a live pod: dropped, with a "
        "NotDeleted warning on the pod",
    ),
    Scenario(
        "disruption/scale-down",
        (
            *_ready_set("web", 3),
            Create(budget(minAvailable=2)),
            Settle(),
            Patch("replicasets", "web", {"spec": {"replicas": 2}}),
            Settle(),
        ),
        kinds=KINDS,
        doc="the ReplicaSet scaled down to 2: expected 2, current 2, none allowed",
    ),
]

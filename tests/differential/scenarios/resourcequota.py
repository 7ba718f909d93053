"""ResourceQuota: status.hard and status.used per kind and scope, replenishment, and the API
server's admission charging creates into status.used."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Delete, Kubelet, Patch, Scenario, Settle
from ._objects import bare_pod

_KINDS = ("resourcequotas", "pods")


def quota(name: str, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name},
        "spec": {"hard": hard, **spec},
    }


def sized_pod(name: str, cpu: str, memory: str) -> dict[str, Any]:
    pod = bare_pod(name, name)
    resources = {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}}
    pod["spec"]["containers"][0]["resources"] = resources
    return pod


def service(name: str, kind: str = "ClusterIP") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"type": kind, "selector": {"app": name}, "ports": [{"port": 80}]},
    }


SCENARIOS = [
    Scenario(
        "resourcequota/replenishes-when-a-pod-finishes-or-goes",
        (
            Create(bare_pod("a", "a")),
            Create(bare_pod("b", "b")),
            Create(quota("q", {"pods": "10", "count/pods": "10"})),
            Settle(),
            Kubelet("app=a", phase="Succeeded", ready=False),
            Settle(),
            Delete("pods", "b"),
            Settle(),
        ),
        kinds=_KINDS,
        doc="Pods that exist before the quota are counted; a Succeeded pod stops counting as "
        "a pod (still as an object), a deleted one at all, without waiting for the resync.",
    ),
    Scenario(
        "resourcequota/compute-resources-and-scopes",
        (
            Create(sized_pod("small", "100m", "64Mi")),
            Create(sized_pod("big", "200m", "1Gi")),
            Create(bare_pod("none", "none")),
            Settle(),
            Create(quota("compute", {"requests.cpu": "1", "limits.memory": "4Gi"})),
            Create(quota("besteffort", {"pods": "5"}, scopes=["BestEffort"])),
            Create(quota("notbesteffort", {"pods": "5"}, scopes=["NotBestEffort"])),
            Settle(),
        ),
        kinds=_KINDS,
        doc="Requests and limits are summed in the first pod's format; scopes pick pods.",
    ),
    Scenario(
        "resourcequota/services-and-type-changes",
        (
            Create(service("s")),
            Settle(),
            Create(quota("q", {"services": "3", "services.loadbalancers": "2"})),
            Settle(),
            Patch("services", "s", {"spec": {"type": "LoadBalancer"}}),
            Settle(),
        ),
        kinds=("resourcequotas",),
        doc="A ClusterIP Service turned LoadBalancer is charged by admission.",
    ),
    Scenario(
        "resourcequota/counts-configmaps",
        (
            Create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}}),
            Settle(),
            Create(quota("q", {"configmaps": "5", "count/configmaps": "5"})),
            Settle(),
        ),
        kinds=("resourcequotas",),
        doc="ConfigMaps, kube-root-ca.crt included, under both names.",
    ),
    Scenario(
        "resourcequota/admission-charges-creates",
        (
            Create(quota("q", {"pods": "2", "requests.cpu": "1"})),
            Settle(),
            Create(sized_pod("a", "300m", "64Mi")),
            Create(sized_pod("b", "300m", "64Mi")),
            Settle(),
        ),
        kinds=_KINDS,
        doc="Pods created after the quota are charged by the API server as they are admitted.",
    ),
]

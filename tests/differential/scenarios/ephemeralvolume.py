"""Ephemeral volumes: each generic ephemeral volume of a pod gets its claim, owned by the pod."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Delete, Scenario, Settle


def ephemeral(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    template: dict[str, Any] = {
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "resources": {"requests": {"storage": "1Gi"}},
        }
    }
    if labels:
        template["metadata"] = {"labels": labels}
    return {"name": name, "ephemeral": {"volumeClaimTemplate": template}}


def worker(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "main", "image": "busybox"}],
            "volumes": [
                ephemeral("scratch", {"use": "scratch"}),
                ephemeral("cache"),
                {"name": "tmp", "emptyDir": {}},
            ],
        },
    }


SCENARIOS = [
    Scenario(
        "ephemeralvolume/claim-per-volume-deleted-with-the-pod",
        (
            Create(worker("worker")),
            Settle(),
            Delete("pods", "worker"),
            Settle(),
        ),
        kinds=("persistentvolumeclaims", "pods"),
        doc="The claims carry the template's labels and the pod as controller; the garbage "
        "collector removes them with the pod (pvc-protection lets them go: no node).",
    ),
]

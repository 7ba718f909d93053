"""Manifests the scenarios share."""

from __future__ import annotations

from typing import Any


def pod_template(app: str, image: str = "nginx:1.25") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": image}]},
    }


def deployment(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template(name),
            **spec,
        },
    }


def replicaset(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template(name),
        },
    }


def job(name: str, **spec: Any) -> dict[str, Any]:
    template = pod_template(name, "busybox")
    template["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": template, **spec},
    }


def bare_pod(name: str, app: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
    }


def claim(name: str, volume_name: str | None = None) -> dict[str, Any]:
    """A 1Gi ReadWriteOnce claim without a storage class (neither side provisions one),
    pre-bound to ``volume_name`` if given."""
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "storageClassName": ""}
    if volume_name:
        spec["volumeName"] = volume_name
    spec["resources"] = {"requests": {"storage": "1Gi"}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": spec,
    }


def pod_with_claim(name: str, claim_name: str, node: str | None) -> dict[str, Any]:
    """A pod mounting ``claim_name`` as volume ``data``, on ``node`` if given."""
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}

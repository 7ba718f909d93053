"""Manifests of the endpoint scenarios: a Node (pods' endpoints need theirs to exist), Services
and pods bound to the node."""

from __future__ import annotations

from typing import Any


def node(name: str, zone: str = "zone-a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
    }


def service(name: str, selector: dict[str, str] | None, **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", None)
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, **({"labels": labels} if labels else {})},
        "spec": {
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}],
            **({"selector": selector} if selector is not None else {}),
            **spec,
        },
    }
    return body


def bound_pod(
    name: str, node_name: str, *, ports: list[dict[str, Any]] | None = None, **spec: Any
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "nginx:1.25"}
    if ports:
        container["ports"] = ports
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web", "pod": name}},
        "spec": {"nodeName": node_name, "containers": [container], **spec},
    }
